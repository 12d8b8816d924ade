#include "io/prepare.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/byte_tokenizer.h"
#include "io/token_file.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::vector<int32_t> read_all(const std::string& path) {
  const TokenFile file(path);
  std::vector<int32_t> tokens(file.size());
  file.copy(0, file.size(), tokens.data());
  return tokens;
}

// 1 for each token of the file that is a training target, 0 for the others.
std::vector<int> targets_of(const std::string& path) {
  const TokenFile file(path);
  std::vector<int> targets(file.size());
  for (size_t i = 0; i < file.size(); ++i) targets[i] = file.is_target(i) ? 1 : 0;
  return targets;
}

TEST_CASE("prepare joins the encoded documents with EOT after each one") {
  TempDir dir;
  const std::string input = dir.write("corpus.jsonl", "{\"text\": \"ab\"}\n{\"text\": \"c\"}\n");
  const std::string output = dir.file("corpus.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizer());
  CHECK(stats.documents == 2);
  CHECK(stats.bytes == 3);
  CHECK(stats.tokens == 5);
  CHECK(stats.target_tokens == 5);
  CHECK(read_all(output) == std::vector<int32_t>{'a', 'b', 256, 'c', 256});
  CHECK(TokenFile(output).vocab_size() == 257);
  CHECK_FALSE(TokenFile(output).has_loss_mask());
}

TEST_CASE("prepare masks prompt tokens out of the loss and keeps the response and its EOT") {
  TempDir dir;
  const std::string input = dir.write("instruct.jsonl",
                                      "{\"prompt\": \"Q?\", \"response\": \"A\"}\n"
                                      "{\"text\": \"t\"}\n"
                                      "{\"prompt\": \"P\", \"response\": \"\"}\n");
  const std::string output = dir.file("instruct.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizer());
  CHECK(stats.documents == 3);
  CHECK(stats.bytes == 5);
  CHECK(stats.tokens == 8);
  CHECK(stats.target_tokens == 5);
  CHECK(read_all(output) == std::vector<int32_t>{'Q', '?', 'A', 256, 't', 256, 'P', 256});
  CHECK(targets_of(output) == std::vector<int>{0, 0, 1, 1, 1, 1, 0, 1});
  CHECK(TokenFile(output).target_count() == 5);
}

TEST_CASE("the bundled instruction dataset prepares with its prompts masked") {
  TempDir dir;
  const std::string output = dir.file("instruct.tok");
  const PrepareStats stats = prepare_token_file(
      std::string(LLMFT_SOURCE_DIR) + "/examples/data/instruct.jsonl", output, ByteTokenizer());
  CHECK(stats.documents >= 200);
  CHECK(stats.target_tokens > stats.documents);
  CHECK(stats.target_tokens < stats.tokens);
  const TokenFile file(output);
  CHECK(file.has_loss_mask());
  CHECK(file.target_count() == stats.target_tokens);
  CHECK_FALSE(file.is_target(0));          // the first prompt's first byte
  CHECK(file.is_target(file.size() - 1));  // the last document's EOT
}

// The byte tokenizer with a BOS token, 257, as Llama's tokenizers put before each text.
class ByteTokenizerWithBos : public Tokenizer {
 public:
  std::string name() const override { return "byte+bos"; }
  int vocab_size() const override { return 258; }
  int32_t eot_token() const override { return bytes_.eot_token(); }
  std::optional<int32_t> bos_token() const override { return 257; }
  std::vector<int32_t> encode(std::string_view text) const override { return bytes_.encode(text); }
  std::vector<int32_t> encode_with_offsets(std::string_view text,
                                           std::vector<size_t>& starts) const override {
    return bytes_.encode_with_offsets(text, starts);
  }
  std::string decode(const std::vector<int32_t>& tokens) const override {
    return bytes_.decode(tokens);
  }

 private:
  ByteTokenizer bytes_;
};

TEST_CASE("prepare puts BOS first: a target in a text, part of the prompt otherwise") {
  TempDir dir;
  const std::string input = dir.write("mixed.jsonl",
                                      "{\"text\": \"ab\"}\n"
                                      "{\"prompt\": \"Q\", \"response\": \"A\"}\n");
  const std::string output = dir.file("mixed.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizerWithBos());
  CHECK(read_all(output) == std::vector<int32_t>{257, 'a', 'b', 256, 257, 'Q', 'A', 256});
  CHECK(targets_of(output) == std::vector<int>{1, 1, 1, 1, 0, 0, 1, 1});
  CHECK(stats.target_tokens == 6);
}

TEST_CASE("prepare of a plain text file writes one document and its EOT") {
  TempDir dir;
  const std::string input = dir.write("corpus.txt", "Hi\n");
  const std::string output = dir.file("corpus.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizer());
  CHECK(stats.documents == 1);
  CHECK(stats.target_tokens == 4);
  CHECK(read_all(output) == std::vector<int32_t>{'H', 'i', '\n', 256});
  CHECK_FALSE(TokenFile(output).has_loss_mask());
}

TEST_CASE("prepare of bad input throws and writes nothing") {
  TempDir dir;
  const std::string input = dir.write("bad.jsonl", "not json\n");
  CHECK_THROWS_AS(prepare_token_file(input, dir.file("bad.tok"), ByteTokenizer()), Error);
  CHECK_FALSE(fs::exists(dir.file("bad.tok")));

  const std::string blank = dir.write("blank.jsonl", "\n\n");
  try {
    prepare_token_file(blank, dir.file("blank.tok"), ByteTokenizer());
    FAIL("expected an Error");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(message.find(blank) != std::string::npos);
    CHECK(message.find("the dataset is empty") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir.file("blank.tok")));
}

}  // namespace
}  // namespace llmft::io
