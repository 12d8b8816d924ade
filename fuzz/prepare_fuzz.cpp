// Fuzz target: a JSONL dataset of arbitrary bytes through read_documents, then
// prepare_token_file with the byte tokenizer. llmft::Error is the expected answer to a
// bad file; an accepted one must give a token file that reads back with the counts
// prepare reported.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/prepare.h"
#include "io/text_source.h"
#include "io/token_file.h"
#include "io/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const llmft::fuzz::ScratchDir& dir = llmft::fuzz::ScratchDir::get();
  const std::string input = dir.write("data.jsonl", data, size);
  const std::string output = dir.path("data.tokens");
  static const std::unique_ptr<llmft::io::Tokenizer> tok = llmft::io::make_tokenizer("byte");
  std::vector<llmft::io::Document> documents;
  try {
    documents = llmft::io::read_documents(input, {});
  } catch (const llmft::Error&) {
    return 0;
  }
  FUZZ_CHECK(!documents.empty());
  try {
    const llmft::io::PrepareStats stats = llmft::io::prepare_token_file(input, output, *tok);
    FUZZ_CHECK(stats.documents == documents.size());
    const llmft::io::TokenFile file(output);
    FUZZ_CHECK(file.size() == stats.tokens && file.target_count() == stats.target_tokens);
  } catch (const llmft::Error&) {
  }
  return 0;
}
