#include "io/prepare.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/byte_tokenizer.h"
#include "io/token_file.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp directory, removed with its contents.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("llmft_prepare_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::vector<int32_t> read_all(const std::string& path) {
  const TokenFile file(path);
  std::vector<int32_t> tokens(file.size());
  file.copy(0, file.size(), tokens.data());
  return tokens;
}

TEST_CASE("prepare joins the encoded documents with EOT after each one") {
  TempDir dir;
  const std::string input = dir.file("corpus.jsonl");
  std::ofstream(input) << "{\"text\": \"ab\"}\n{\"text\": \"c\"}\n";
  const std::string output = dir.file("corpus.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizer(), false);
  CHECK(stats.documents == 2);
  CHECK(stats.bytes == 3);
  CHECK(stats.tokens == 5);
  CHECK(read_all(output) == std::vector<int32_t>{'a', 'b', 256, 'c', 256});
  CHECK(TokenFile(output).vocab_size() == 257);
}

TEST_CASE("prepare of a plain text file writes one document and its EOT") {
  TempDir dir;
  const std::string input = dir.file("corpus.txt");
  std::ofstream(input) << "Hi\n";
  const std::string output = dir.file("corpus.tok");
  const PrepareStats stats = prepare_token_file(input, output, ByteTokenizer(), true);
  CHECK(stats.documents == 1);
  CHECK(read_all(output) == std::vector<int32_t>{'H', 'i', '\n', 256});
}

TEST_CASE("prepare of bad input throws and writes nothing") {
  TempDir dir;
  const std::string input = dir.file("bad.jsonl");
  std::ofstream(input) << "not json\n";
  CHECK_THROWS_AS(prepare_token_file(input, dir.file("bad.tok"), ByteTokenizer(), false), Error);
  CHECK_FALSE(fs::exists(dir.file("bad.tok")));
}

}  // namespace
}  // namespace llmft::io
