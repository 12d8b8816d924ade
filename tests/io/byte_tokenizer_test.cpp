#include "io/byte_tokenizer.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "io/tokenizer.h"

namespace llmft::io {
namespace {

TEST_CASE("byte tokenizer maps each byte to its value and EOT to 256") {
  ByteTokenizer tok;
  CHECK(tok.name() == "byte");
  CHECK(tok.vocab_size() == 257);
  CHECK(tok.eot_token() == 256);
  const std::string text = "Hi\n\xc3\xa9\xff";  // includes a UTF-8 character and byte 255
  CHECK(tok.encode(text) == std::vector<int32_t>{'H', 'i', '\n', 0xc3, 0xa9, 0xff});
  CHECK(tok.encode("").empty());
}

TEST_CASE("byte tokenizer round-trips text and renders EOT as a newline") {
  ByteTokenizer tok;
  const char raw[] = "any bytes \x00\x01\x7f\x80 at all";
  const std::string text(raw, sizeof(raw) - 1);
  CHECK(tok.decode(tok.encode(text)) == text);
  CHECK(tok.decode({'a', 256, 'b'}) == "a\nb");
  CHECK_THROWS_AS(tok.decode({257}), Error);
  CHECK_THROWS_AS(tok.decode({-1}), Error);
}

TEST_CASE("make_tokenizer builds the byte tokenizer and lists the known ones otherwise") {
  CHECK(make_tokenizer("byte")->name() == "byte");
  try {
    make_tokenizer("sentencepiece");
    FAIL("expected an Error");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(message.find("sentencepiece") != std::string::npos);
    CHECK(message.find("'byte'") != std::string::npos);
  }
  CHECK_THROWS_AS(make_tokenizer("byte:extra"), Error);
}

}  // namespace
}  // namespace llmft::io
