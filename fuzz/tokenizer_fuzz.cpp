// Fuzz target: a tokenizer.json of arbitrary bytes through make_tokenizer (read_bpe_files,
// then the byte-level or SentencePiece-style BPE tables), then encode and decode a short
// text. llmft::Error is the expected answer to a bad file; tokens of an accepted one must
// lie in [0, vocab_size).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/tokenizer.h"

namespace {

constexpr const char* kText =
    "Hello world, it's 2024! \xC3\xA9t\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD  \t\n"
    "<|endoftext|> <s> caf\xC3\xA9 \xF0\x9F\x98\x80 I'LL 12345";

void check_tokens(const std::vector<int32_t>& tokens, const llmft::io::Tokenizer& tok) {
  for (int32_t token : tokens) FUZZ_CHECK(token >= 0 && token < tok.vocab_size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = llmft::fuzz::ScratchDir::get().write("tokenizer.json", data, size);
  std::unique_ptr<llmft::io::Tokenizer> tok;
  try {
    tok = llmft::io::make_tokenizer("bpe:" + path);
  } catch (const llmft::Error&) {
    return 0;
  }
  FUZZ_CHECK(tok->vocab_size() > 0);
  FUZZ_CHECK(tok->eot_token() >= 0 && tok->eot_token() < tok->vocab_size());
  try {
    const std::vector<int32_t> tokens = tok->encode(kText);
    check_tokens(tokens, *tok);
    tok->decode(tokens);
    const std::vector<int32_t> with_special = tok->encode_with_special_tokens(kText);
    check_tokens(with_special, *tok);
    tok->decode(with_special);
  } catch (const llmft::Error&) {
  }
  return 0;
}
