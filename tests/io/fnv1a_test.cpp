// io/value_digest.h's fnv1a_bytes against the published FNV-1a 64-bit test vectors (the
// FNV reference's "", "a" and "foobar"), and hashing in blocks against hashing at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "io/value_digest.h"

using llmft::io::fnv1a_bytes;
using llmft::io::kFnvOffset;

TEST_CASE("fnv1a_bytes gives the published FNV-1a 64-bit values") {
  const auto hash = [](const std::string& text) {
    return fnv1a_bytes(kFnvOffset, text.data(), text.size());
  };
  CHECK(hash("") == 0xcbf29ce484222325ull);
  CHECK(hash("a") == 0xaf63dc4c8601ec8cull);
  CHECK(hash("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("fnv1a_bytes continued block by block equals one pass") {
  const std::string text = "a token file read a block at a time";
  uint64_t blocks = kFnvOffset;
  for (size_t at = 0; at < text.size(); at += 8) {
    blocks = fnv1a_bytes(blocks, text.data() + at, std::min<size_t>(8, text.size() - at));
  }
  CHECK(blocks == fnv1a_bytes(kFnvOffset, text.data(), text.size()));
}
