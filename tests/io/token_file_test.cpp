#include "io/token_file.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp directory, removed with its contents.
struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("llmft_token_file_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string error_of(const std::string& path) {
  try {
    TokenFile file(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("token file round-trips uint16 tokens") {
  TempDir dir;
  const std::string path = dir.file("small.tok");
  const std::vector<int32_t> tokens = {0, 1, 255, 256, 65535, 42};
  write_token_file(path, tokens, 65536);
  CHECK(fs::file_size(path) == kTokenFileHeaderBytes + 2 * tokens.size());

  TokenFile file(path);
  CHECK(file.path() == path);
  REQUIRE(file.size() == tokens.size());
  CHECK(file.vocab_size() == 65536);
  for (size_t i = 0; i < tokens.size(); ++i) CHECK(file[i] == tokens[i]);
  std::vector<int32_t> middle(3);
  file.copy(2, 3, middle.data());
  CHECK(middle == std::vector<int32_t>{255, 256, 65535});
}

TEST_CASE("token file round-trips uint32 tokens for large vocabularies") {
  TempDir dir;
  const std::string path = dir.file("large.tok");
  const std::vector<int32_t> tokens = {0, 65536, 128000, 7, 128255};
  write_token_file(path, tokens, 128256);
  CHECK(fs::file_size(path) == kTokenFileHeaderBytes + 4 * tokens.size());

  TokenFile file(path);
  REQUIRE(file.size() == tokens.size());
  CHECK(file.vocab_size() == 128256);
  std::vector<int32_t> all(tokens.size());
  file.copy(0, tokens.size(), all.data());
  CHECK(all == tokens);
}

TEST_CASE("token file header is the documented little-endian layout") {
  TempDir dir;
  const std::string path = dir.file("layout.tok");
  write_token_file(path, {0x0102, 0x0304}, 65536);
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
  // clang-format off
  const std::vector<unsigned char> expected = {
      'L', 'L', 'M', 'F', 'T', 'T', 'O', 'K',  // magic
      1, 0, 0, 0,                              // version
      2, 0, 0, 0,                              // bytes per token
      2, 0, 0, 0, 0, 0, 0, 0,                  // token count
      0, 0, 1, 0,                              // vocab size 65536
      0, 0, 0, 0,                              // reserved
      0x02, 0x01, 0x04, 0x03};                 // tokens 0x0102, 0x0304
  // clang-format on
  CHECK(bytes == expected);
}

TEST_CASE("an empty token list gives a header-only file") {
  TempDir dir;
  const std::string path = dir.file("empty.tok");
  write_token_file(path, {}, 257);
  TokenFile file(path);
  CHECK(file.size() == 0);
}

TEST_CASE("a truncated token file names the path and both sizes") {
  TempDir dir;
  const std::string path = dir.file("truncated.tok");
  write_token_file(path, std::vector<int32_t>(100, 5), 257);
  fs::resize_file(path, kTokenFileHeaderBytes + 150);
  const std::string message = error_of(path);
  CHECK(contains(message, path));
  CHECK(contains(message, "232"));  // expected: 32 + 100 * 2
  CHECK(contains(message, "182"));  // actual
  CHECK(contains(message, "llmft prepare"));

  fs::resize_file(path, 10);  // shorter than the header
  CHECK(contains(error_of(path), path));
}

TEST_CASE("a file that is not a token file is rejected by its magic") {
  TempDir dir;
  const std::string path = dir.file("text.tok");
  std::ofstream(path) << "this is plain text, long enough to hold a whole header";
  const std::string message = error_of(path);
  CHECK(contains(message, path));
  CHECK(contains(message, "not an llmft token file"));
}

TEST_CASE("a missing token file names the path") {
  TempDir dir;
  const std::string path = dir.file("missing.tok");
  const std::string message = error_of(path);
  CHECK(contains(message, path));
  CHECK(contains(message, "llmft prepare"));
}

TEST_CASE("a failed write leaves no file behind and keeps the old one") {
  TempDir dir;
  const std::string path = dir.file("atomic.tok");
  // Token 300 is outside a 257-token vocabulary: the write fails after it started.
  CHECK_THROWS_AS(write_token_file(path, {1, 2, 300}, 257), Error);
  CHECK(fs::is_empty(dir.path));

  write_token_file(path, {1, 2, 3}, 257);
  CHECK_THROWS_AS(write_token_file(path, {1, 2, -1}, 257), Error);
  CHECK(TokenFile(path).size() == 3);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);

  CHECK_THROWS_AS(write_token_file(dir.file("no_such_dir/x.tok"), {1}, 257), Error);
}

TEST_CASE("token files move but do not copy") {
  static_assert(!std::is_copy_constructible_v<TokenFile>);
  TempDir dir;
  const std::string path = dir.file("move.tok");
  write_token_file(path, {7, 8, 9}, 257);
  TokenFile first(path);
  TokenFile second(std::move(first));
  CHECK(second.size() == 3);
  CHECK(second[2] == 9);
  TokenFile third(path);
  third = std::move(second);
  CHECK(third[0] == 7);
}

}  // namespace
}  // namespace llmft::io
