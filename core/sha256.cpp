#include "core/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace colltune {

Sha256Digest sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size())
    throw std::runtime_error("SHA-256 failed (OpenSSL libcrypto)");
  return digest;
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (unsigned char b : digest) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::optional<Sha256Digest> parse_sha256_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Sha256Digest digest{};
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = value(hex[2 * i]);
    const int lo = value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    digest[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return digest;
}

}  // namespace colltune
