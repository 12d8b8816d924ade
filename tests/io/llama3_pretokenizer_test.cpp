// Llama 3's pre-tokenizer on cases checked by hand against Hugging Face `tokenizers`.
#include "io/llama3_pretokenizer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace llmft::io {
namespace {

using Pieces = std::vector<std::string>;

Pieces pretokens(std::string_view text) {
  Pieces pieces;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = llama3_pretoken_end(text, begin);
    pieces.emplace_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

TEST_CASE("Llama 3 pre-tokenization splits off contractions in either case, ASCII only") {
  CHECK(pretokens("DON'T I'M we'LL You'Re") ==
        Pieces{"DON", "'T", " I", "'M", " we", "'LL", " You", "'Re"});
  // U+017F (long s) folds to s, but the regex does not take "'ſ" as a contraction.
  CHECK(pretokens("'\xC5\xBF 'K") == Pieces{"'\xC5\xBF", " '", "K"});
  CHECK(pretokens("'sam 'hello") == Pieces{"'s", "am", " '", "hello"});
}

TEST_CASE("Llama 3 pre-tokenization puts one non-letter before letters and cuts digits by three") {
  CHECK(pretokens("\t\tfoo") == Pieces{"\t", "\tfoo"});
  CHECK(pretokens("12345 x") == Pieces{"123", "45", " x"});
  CHECK(pretokens("x 7") == Pieces{"x", " ", "7"});
  CHECK(pretokens("'hello ...\n\nz") == Pieces{"'hello", " ...\n\n", "z"});
  CHECK(pretokens("(a)+b") == Pieces{"(a", ")+", "b"});
}

TEST_CASE("Llama 3 pre-tokenization keeps white space up to its last line break together") {
  CHECK(pretokens("a  \n\n  b  ") == Pieces{"a", "  \n\n", " ", " b", "  "});
  CHECK(pretokens(" \r\n\r\n  x") == Pieces{" \r\n\r\n", " ", " x"});
  CHECK(pretokens("a\nb") == Pieces{"a", "\n", "b"});
  CHECK(pretokens("a   b") == Pieces{"a", "  ", " b"});
}

TEST_CASE("Llama 3 pre-tokenization treats bytes that are not UTF-8 as punctuation") {
  CHECK(pretokens("a\xFF"
                  "b\xC3") == Pieces{"a",
                                     "\xFF"
                                     "b",
                                     "\xC3"});
  CHECK(pretokens("1\x80\x80!\n") == Pieces{"1", "\x80\x80!\n"});
}

}  // namespace
}  // namespace llmft::io
