#include "io/token_file.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

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

std::vector<unsigned char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// The header of a file of `count` uint16 tokens of a 257-token vocabulary, written by
// hand after the documented layout.
std::vector<unsigned char> header(unsigned char version, unsigned char count, unsigned char flags) {
  // clang-format off
  return {'L', 'L', 'M', 'F', 'T', 'T', 'O', 'K',
          version, 0, 0, 0,
          2, 0, 0, 0,
          count, 0, 0, 0, 0, 0, 0, 0,
          1, 1, 0, 0,
          flags, 0, 0, 0};
  // clang-format on
}

// `header` followed by `body`.
std::vector<unsigned char> file_bytes(std::vector<unsigned char> header_bytes,
                                      const std::vector<unsigned char>& body) {
  header_bytes.insert(header_bytes.end(), body.begin(), body.end());
  return header_bytes;
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
  const std::vector<unsigned char> bytes = bytes_of(path);
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

TEST_CASE("a loss mask makes a version 2 file with flag bit 0 and one byte per token") {
  TempDir dir;
  const std::string path = dir.file("masked.tok");
  write_token_file(path, {'a', 256, 'c'}, 257, {0, 1, 1});
  // clang-format off
  const std::vector<unsigned char> tokens_and_mask = {
      'a', 0, 0, 1, 'c', 0,  // tokens 'a', 256, 'c'
      0, 1, 1};              // loss mask
  // clang-format on
  CHECK(bytes_of(path) ==
        file_bytes(header(/*version=*/2, /*count=*/3, /*flags=*/1), tokens_and_mask));

  TokenFile file(path);
  CHECK(file.has_loss_mask());
  CHECK(file.target_count() == 2);
  CHECK_FALSE(file.is_target(0));
  CHECK(file.is_target(1));
  CHECK(file.is_target(2));
  CHECK(file[1] == 256);
}

TEST_CASE("a loss mask round-trips with uint32 tokens") {
  TempDir dir;
  const std::string path = dir.file("masked_large.tok");
  const std::vector<int32_t> tokens = {128000, 5, 6, 128001, 7};
  const std::vector<uint8_t> mask = {0, 0, 1, 0, 1};
  write_token_file(path, tokens, 128256, mask);
  CHECK(fs::file_size(path) == kTokenFileHeaderBytes + 5 * tokens.size());

  TokenFile file(path);
  std::vector<int32_t> all(tokens.size());
  file.copy(0, tokens.size(), all.data());
  CHECK(all == tokens);
  for (size_t i = 0; i < mask.size(); ++i) CHECK(file.is_target(i) == (mask[i] == 1));
  CHECK(file.target_count() == 2);
}

TEST_CASE("a mask with every token a target is not written: the file stays version 1") {
  TempDir dir;
  const std::string unmasked = dir.file("unmasked.tok");
  const std::string all_targets = dir.file("all_targets.tok");
  write_token_file(unmasked, {1, 2, 3}, 257);
  write_token_file(all_targets, {1, 2, 3}, 257, {1, 1, 1});
  CHECK(bytes_of(all_targets) == bytes_of(unmasked));
  CHECK(bytes_of(unmasked)[8] == 1);  // version

  TokenFile file(all_targets);
  CHECK_FALSE(file.has_loss_mask());
  CHECK(file.target_count() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(file.is_target(i));
}

TEST_CASE("version 1 files, and version 2 files without the mask flag, train on every token") {
  TempDir dir;
  const std::string version_1 = dir.file("v1.tok");
  write_bytes(version_1, file_bytes(header(1, 2, 0), {'h', 0, 0, 1}));  // 'h', 256
  TokenFile file(version_1);
  REQUIRE(file.size() == 2);
  CHECK(file[0] == 'h');
  CHECK(file[1] == 256);
  CHECK(file.vocab_size() == 257);
  CHECK_FALSE(file.has_loss_mask());
  CHECK(file.target_count() == 2);
  CHECK(file.is_target(0));
  CHECK(file.is_target(1));

  const std::string version_2 = dir.file("v2.tok");
  write_bytes(version_2, file_bytes(header(2, 2, 0), {'h', 0, 'i', 0}));
  CHECK_FALSE(TokenFile(version_2).has_loss_mask());
  CHECK(TokenFile(version_2).target_count() == 2);
}

TEST_CASE("a malformed loss mask names the file, the token and what to do") {
  TempDir dir;
  const std::string bad_byte = dir.file("bad_byte.tok");
  write_bytes(bad_byte, file_bytes(header(2, 3, 1), {'a', 0, 'b', 0, 'c', 0, 1, 2, 0}));
  std::string message = error_of(bad_byte);
  CHECK(contains(message, bad_byte));
  CHECK(contains(message, "loss-mask byte 2 for token 1 (expected 0 or 1)"));
  CHECK(contains(message, "llmft prepare"));

  const std::string no_mask = dir.file("no_mask.tok");  // the flag says a mask follows
  write_bytes(no_mask, file_bytes(header(2, 3, 1), {'a', 0, 'b', 0, 'c', 0}));
  message = error_of(no_mask);
  CHECK(contains(message, no_mask));
  CHECK(contains(message, "should be 41 bytes"));  // 32 + 3 * 2 + 3
  CHECK(contains(message, "loss mask"));
  CHECK(contains(message, "is 38 bytes"));
  CHECK(contains(message, "llmft prepare"));

  const std::string extra = dir.file("extra.tok");  // a mask without the flag
  write_bytes(extra, file_bytes(header(2, 3, 0), {'a', 0, 'b', 0, 'c', 0, 1, 1, 0}));
  CHECK(contains(error_of(extra), "should be 38 bytes"));
}

TEST_CASE("unknown versions and flags are rejected") {
  TempDir dir;
  const std::string version_4 = dir.file("v4.tok");
  write_bytes(version_4, file_bytes(header(4, 1, 0), {'a', 0}));
  std::string message = error_of(version_4);
  CHECK(contains(message, "format version 4"));
  CHECK(contains(message, "llmft prepare"));

  const std::string v3_without_samples = dir.file("v3_without_samples.tok");
  write_bytes(v3_without_samples, file_bytes(header(3, 1, 0), {'a', 0}));
  CHECK(contains(error_of(v3_without_samples), "has flags 0"));

  const std::string flag_in_v1 = dir.file("flag_in_v1.tok");
  write_bytes(flag_in_v1, file_bytes(header(1, 1, 1), {'a', 0, 1}));
  message = error_of(flag_in_v1);
  CHECK(contains(message, flag_in_v1));
  CHECK(contains(message, "has flags 1"));

  const std::string unknown_flag = dir.file("unknown_flag.tok");
  write_bytes(unknown_flag, file_bytes(header(2, 1, 3), {'a', 0, 1}));
  CHECK(contains(error_of(unknown_flag), "has flags 3"));
}

TEST_CASE("sample starts that do not add up or do not rise are refused, naming the file") {
  TempDir dir;
  // Two tokens 'a', 'b', then the sample count and the starts, 8 bytes each.
  const auto samples = [](std::vector<uint64_t> words) {
    std::vector<unsigned char> body = {'a', 0, 'b', 0};
    for (uint64_t word : words) {
      for (int byte = 0; byte < 8; ++byte)
        body.push_back(static_cast<unsigned char>(word >> (8 * byte)));
    }
    return body;
  };
  const std::string good = dir.file("good.tok");
  write_bytes(good, file_bytes(header(3, 2, 2), samples({2, 0, 1})));
  CHECK(TokenFile(good).sample_starts() == std::vector<uint64_t>{0, 1});
  const std::string wrong_count = dir.file("wrong_count.tok");
  write_bytes(wrong_count, file_bytes(header(3, 2, 2), samples({3, 0, 1})));
  CHECK(contains(error_of(wrong_count), "claims 3 samples"));
  const std::string huge_count = dir.file("huge_count.tok");
  write_bytes(huge_count, file_bytes(header(3, 2, 2), samples({UINT64_MAX, 0, 1})));
  CHECK(contains(error_of(huge_count), "samples"));
  const std::string not_rising = dir.file("not_rising.tok");
  write_bytes(not_rising, file_bytes(header(3, 2, 2), samples({2, 0, 0})));
  CHECK(contains(error_of(not_rising), "starts must be 0 first, rise"));
  const std::string past_end = dir.file("past_end.tok");
  write_bytes(past_end, file_bytes(header(3, 2, 2), samples({2, 0, 2})));
  CHECK(contains(error_of(past_end), past_end));
  const std::string no_count = dir.file("no_count.tok");
  write_bytes(no_count, file_bytes(header(3, 2, 2), {'a', 0, 'b', 0, 1, 0}));
  CHECK(contains(error_of(no_count), "truncated or corrupt"));
}

TEST_CASE("a loss mask that does not fit the tokens is refused before anything is written") {
  TempDir dir;
  CHECK_THROWS_AS(write_token_file(dir.file("short.tok"), {1, 2, 3}, 257, {1, 0}), Error);
  CHECK_THROWS_AS(write_token_file(dir.file("two.tok"), {1, 2, 3}, 257, {1, 2, 0}), Error);
  CHECK(fs::is_empty(dir.path()));
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
  CHECK(fs::is_empty(dir.path()));

  write_token_file(path, {1, 2, 3}, 257);
  CHECK_THROWS_AS(write_token_file(path, {1, 2, -1}, 257), Error);
  CHECK(TokenFile(path).size() == 3);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);

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

  const std::string masked = dir.file("masked_move.tok");
  write_token_file(masked, {7, 8, 9}, 257, {0, 1, 1});
  TokenFile fourth(masked);
  third = std::move(fourth);
  CHECK(third.has_loss_mask());
  CHECK_FALSE(third.is_target(0));
  CHECK(third.target_count() == 2);
}

TEST_CASE("token ids outside the vocabulary are refused at load, naming the id and offset") {
  TempDir dir;
  // A 257-token vocabulary in 2-byte tokens holding id 60000 (0xEA60) as its third token.
  const std::string large = dir.file("large_id.tok");
  write_bytes(large, file_bytes(header(1, 3, 0), {'a', 0, 'b', 0, 0x60, 0xEA}));
  std::string message = error_of(large);
  CHECK(contains(message, large));
  CHECK(contains(message, "token id 60000 at token 2 (byte offset 36)"));
  CHECK(contains(message, "vocabulary of 257 ids"));
  CHECK(contains(message, "llmft prepare"));

  // 4-byte tokens: 0xFFFFFFFF would read as -1 (a masked target) if it were not checked.
  std::vector<unsigned char> wide = header(1, 2, 0);
  wide[12] = 4;     // bytes per token
  wide[24] = 0x70;  // vocab_size 70000 = 0x011170
  wide[25] = 0x11;
  wide[26] = 0x01;
  const std::string negative = dir.file("negative_id.tok");
  write_bytes(negative, file_bytes(wide, {5, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}));
  message = error_of(negative);
  CHECK(contains(message, "token id 4294967295 at token 1 (byte offset 36)"));
  CHECK(contains(message, "vocabulary of 70000 ids"));

  // The last id of the vocabulary is inside it.
  const std::string last = dir.file("last_id.tok");
  write_bytes(last, file_bytes(header(1, 1, 0), {0x00, 0x01}));
  CHECK(TokenFile(last)[0] == 256);
}

TEST_CASE("a token file cut short or rewritten under a reader is an error, not a crash") {
  TempDir dir;
  const std::string path = dir.file("shrinking.tok");
  std::vector<int32_t> tokens(5000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i % 257);
  std::vector<uint8_t> loss_mask(tokens.size(), 1);
  loss_mask[0] = 0;  // so that the file carries its mask
  write_token_file(path, tokens, 257, loss_mask);
  const TokenFile file(path);
  std::vector<int32_t> window(100);
  file.copy(4900, 100, window.data());
  CHECK(window[0] == 4900 % 257);

  fs::resize_file(path, kTokenFileHeaderBytes + 2 * 1000);
  std::string message;
  try {
    file.copy(4900, 100, window.data());
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(contains(message, path));
  CHECK(contains(message, "changed while this job was reading it"));
  CHECK(contains(message, "was 15032 bytes, now 2032"));  // 32 + 5000 * (2 + 1)
  std::vector<uint8_t> mask(10);
  CHECK_THROWS_AS(file.copy_loss_mask(4000, 10, mask.data()), Error);
  file.copy(0, 100, window.data());  // what is still there reads as before
  CHECK(window[99] == 99);

  // Rewritten in place with an id the vocabulary does not have.
  std::fstream rewrite(path, std::ios::in | std::ios::out | std::ios::binary);
  rewrite.seekp(kTokenFileHeaderBytes);
  rewrite.write("\xff\xff", 2);
  rewrite.close();
  CHECK_THROWS_WITH_AS(file.copy(0, 10, window.data()),
                       doctest::Contains("changed while this job was reading it"), Error);
}

TEST_CASE("a directory is not a token file") {
  TempDir dir;
  CHECK(contains(error_of(dir.path()), "is not a regular file"));
}

}  // namespace
}  // namespace llmft::io
