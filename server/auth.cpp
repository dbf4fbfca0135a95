#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/random.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace colltune {

std::string_view to_string(Role role) { return role == Role::admin ? "admin" : "viewer"; }

std::optional<Role> parse_role(std::string_view text) {
  if (text == "admin") return Role::admin;
  if (text == "viewer") return Role::viewer;
  return std::nullopt;
}

namespace {

std::string random_base64url_32() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("getrandom failed: no randomness for a token");
    got += static_cast<std::size_t>(n);
  }
  static const char* const kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  unsigned int acc = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  return out;
}

}  // namespace

std::string generate_token() {
  // A token starting with '-' reads as an option on a command line (--token -x...): draw again
  // (1 in 64 draws; the rest of the token keeps its 250+ random bits).
  for (;;) {
    std::string token = random_base64url_32();
    if (token.front() != '-') return token;
  }
}

TokenAuthenticator::TokenAuthenticator(std::vector<TokenEntry> entries)
    : entries_(std::move(entries)) {}

std::optional<TokenEntry> TokenAuthenticator::authenticate(std::string_view token) const {
  const Sha256Digest presented = sha256(token);
  std::optional<TokenEntry> match;
  for (const auto& entry : entries_) {
    // No early exit: every entry costs the same whether or not it matches.
    const bool equal = CRYPTO_memcmp(presented.data(), entry.digest.data(), presented.size()) == 0;
    if (equal && !match) match = entry;
  }
  return match;
}

std::optional<std::string> parse_bearer(std::string_view value) {
  constexpr std::string_view kScheme = "Bearer ";
  if (value.size() <= kScheme.size()) return std::nullopt;
  // The scheme is case-insensitive (RFC 7235).
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(value[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i])))
      return std::nullopt;
  std::string_view token = value.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty() || token.size() > 512) return std::nullopt;
  for (char c : token) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
                    c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
    if (!ok) return std::nullopt;
  }
  return std::string(token);
}

bool is_loopback_address(std::string_view address) {
  if (address == "::1") return true;
  constexpr std::string_view kMapped = "::ffff:";
  if (address.substr(0, kMapped.size()) == kMapped) address.remove_prefix(kMapped.size());
  return address.substr(0, 4) == "127.";
}

}  // namespace colltune
