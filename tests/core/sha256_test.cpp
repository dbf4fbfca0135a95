// core/sha256.h against the FIPS 180-4 example vectors (one block, the padding spilling into a
// second block, a long message). tests/server/daemon_units_test.cpp also compares it with
// OpenSSL for every length around the block boundaries.
#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace colltune {
namespace {

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                          "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HexRoundTrip) {
  const Sha256Digest d = sha256("colltune");
  EXPECT_EQ(parse_sha256_hex(to_hex(d)), d);
  EXPECT_FALSE(parse_sha256_hex(to_hex(d).substr(1)));
  EXPECT_FALSE(parse_sha256_hex(std::string(64, 'z')));
}

}  // namespace
}  // namespace colltune
