// SHA-256 from OpenSSL's libcrypto (the digest only: the campaign core links no TLS and no
// HTTP). Used for API token digests (server/auth.h) and tuning-condition
// fingerprints (campaign/fingerprint.h). Not constant-time: it hashes, it does not compare.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace colltune {

using Sha256Digest = std::array<unsigned char, 32>;

// The digest of `data`.
Sha256Digest sha256(std::string_view data);

// 64 lowercase hex digits.
std::string to_hex(const Sha256Digest& digest);

// 64 hex digits (either case) -> digest; nullopt otherwise.
std::optional<Sha256Digest> parse_sha256_hex(std::string_view hex);

}  // namespace colltune
