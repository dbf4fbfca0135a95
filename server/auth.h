// Bearer-token authentication of the REST API. Tokens are kept only as SHA-256 digests; a
// presented token is hashed and compared with every stored digest in constant time, so neither
// the comparison nor the position of a match leaks through timing.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"

namespace colltune {

// viewer: reads. admin: reads and every mutating call.
enum class Role { viewer = 1, admin = 2 };
std::string_view to_string(Role role);
std::optional<Role> parse_role(std::string_view text);

// A new token: 32 bytes from the kernel's random source (getrandom), base64url without padding
// (43 characters, all valid in a bearer credential, never starting with '-'). Throws
// std::runtime_error when the kernel gives no randomness.
std::string generate_token();

struct TokenEntry {
  Sha256Digest digest{};
  Role role = Role::viewer;
  std::string name;  // shown in logs; never the token
};

class TokenAuthenticator {
 public:
  explicit TokenAuthenticator(std::vector<TokenEntry> entries);

  // The entry a token belongs to; nullopt when unknown. Always compares against every entry.
  std::optional<TokenEntry> authenticate(std::string_view token) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<TokenEntry> entries_;
};

// The token of an "Authorization: Bearer <token>" header value; nullopt when the header is not
// a well-formed bearer credential (RFC 6750 token68 characters, at most 512 of them).
std::optional<std::string> parse_bearer(std::string_view header_value);

// 127.0.0.0/8, ::1 and IPv4-mapped loopback.
bool is_loopback_address(std::string_view address);

}  // namespace colltune
