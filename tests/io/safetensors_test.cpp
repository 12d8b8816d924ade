#include "io/safetensors.h"

#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "io/json.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using llmft::Error;
using llmft::io::Json;
using llmft::io::SafeTensor;
using llmft::io::safetensors_dtype_size;
using llmft::io::SafetensorsFile;
using llmft::io::write_safetensors;
using llmft::testing::TempDir;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), bytes.size());
}

// The 8-byte length, `header` padded with spaces to a multiple of 8, then `data`.
std::string safetensors_bytes(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The message of the llmft::Error that opening `path` throws.
std::string open_error(const fs::path& path) {
  try {
    SafetensorsFile file(path.string());
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected SafetensorsFile to throw for " << path);
  return "";
}

std::string write_error(const std::string& path, const std::vector<SafeTensor>& tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  try {
    write_safetensors(path, tensors, metadata);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected write_safetensors to throw");
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("safetensors_dtype_size knows the safetensors dtypes") {
  CHECK(safetensors_dtype_size("F32") == 4);
  CHECK(safetensors_dtype_size("F16") == 2);
  CHECK(safetensors_dtype_size("BF16") == 2);
  CHECK(safetensors_dtype_size("F64") == 8);
  CHECK(safetensors_dtype_size("I32") == 4);
  CHECK(safetensors_dtype_size("I64") == 8);
  CHECK(safetensors_dtype_size("U8") == 1);
  CHECK(safetensors_dtype_size("U16") == 2);
  CHECK(safetensors_dtype_size("BOOL") == 1);
  CHECK_THROWS_WITH_AS(safetensors_dtype_size("float32"),
                       doctest::Contains("unknown safetensors dtype \"float32\"; expected one of "
                                         "F64, F32"),
                       Error);
}

TEST_CASE("write_safetensors then SafetensorsFile reads the same tensors") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  std::vector<SafeTensor> tensors = {
      {"model.norm.weight", "F16", {3}, {1, 2, 3, 4, 5, 6}},
      {"model.embed_tokens.weight", "F32", {2, 3}, bytes_of<float>({1, 2, 3, 4, 5, 6.5f})},
      {"step", "I64", {}, bytes_of<int64_t>({42})},
      {"empty", "BF16", {0, 4}, {}},
  };
  write_safetensors(path, tensors, {{"format", "pt"}, {"note", "\"quoted\"\n"}});
  CHECK_FALSE(fs::exists(dir.file(".model.safetensors.partial")));

  SafetensorsFile file(path);
  CHECK(file.path() == path);
  REQUIRE(file.tensors().size() == tensors.size());
  for (const SafeTensor& expected : tensors) {
    const SafeTensor& actual = file.at(expected.name);
    CHECK(actual.name == expected.name);
    CHECK(actual.dtype == expected.dtype);
    CHECK(actual.shape == expected.shape);
    CHECK(actual.bytes == expected.bytes);
  }
  CHECK(file.find("absent") == nullptr);
  CHECK(file.metadata() == std::vector<std::pair<std::string, std::string>>{
                               {"format", "pt"}, {"note", "\"quoted\"\n"}});

  // Widest dtype first, so every tensor is aligned to its element size.
  CHECK(file.tensors()[0].name == "step");
  CHECK(file.tensors()[1].name == "model.embed_tokens.weight");

  // Layout: header length, a JSON object padded with spaces to 8 bytes.
  std::string raw = read_all(path);
  uint64_t header_size = 0;
  std::memcpy(&header_size, raw.data(), 8);  // the test machine is little-endian
  CHECK(header_size % 8 == 0);
  CHECK(raw[8] == '{');
  Json header = Json::parse(raw.substr(8, header_size));
  CHECK(header.as_object()[0].first == "__metadata__");
  CHECK(header.at("model.embed_tokens.weight").at("data_offsets").dump() == "[8,32]");
  CHECK(raw.size() == 8 + header_size + 8 + 24 + 6);
}

TEST_CASE("write_safetensors without tensors or metadata") {
  TempDir dir;
  std::string path = dir.file("empty.safetensors");
  write_safetensors(path, {});
  CHECK(read_all(path) == safetensors_bytes("{}", ""));
  SafetensorsFile file(path);
  CHECK(file.tensors().empty());
  CHECK(file.metadata().empty());
}

TEST_CASE("write_safetensors rejects bad tensors, naming the file and the tensor") {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  std::string message = write_error(path, {{"w", "F32", {2, 2}, std::vector<uint8_t>(15)}});
  CHECK(contains(message, path));
  CHECK(contains(message, "tensor \"w\" has 15 bytes, but dtype F32 and shape [2, 2] need 16"));

  message = write_error(path, {{"a", "F32", {1}, std::vector<uint8_t>(4)},
                               {"a", "F32", {1}, std::vector<uint8_t>(4)}});
  CHECK(contains(message, "tensor name \"a\" appears twice"));
  message = write_error(path, {{"a", "F31", {1}, std::vector<uint8_t>(4)}});
  CHECK(contains(message, "tensor \"a\": unknown safetensors dtype \"F31\""));
  message = write_error(path, {{"a", "F32", {-1}, {}}});
  CHECK(contains(message, "shape [-1]"));
  message = write_error(path, {{"__metadata__", "F32", {}, std::vector<uint8_t>(4)}});
  CHECK(contains(message, "is reserved or empty"));
  message = write_error(path, {}, {{"k", "1"}, {"k", "2"}});
  CHECK(contains(message, "metadata key \"k\" appears twice"));
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("SafetensorsFile rejects truncated files, naming the file") {
  TempDir dir;
  fs::path path = dir.path() / "model.safetensors";
  write_safetensors(path.string(), {{"w", "F32", {4}, std::vector<uint8_t>(16, 7)}});
  std::string whole = read_all(path);

  write_raw(path, whole.substr(0, whole.size() - 1));
  std::string message = open_error(path);
  CHECK(contains(message, path.string()));
  CHECK(contains(message, "entry \"w\": data_offsets [0, 16] lie outside the 15-byte data buffer"));

  write_raw(path, whole.substr(0, 20));
  message = open_error(path);
  CHECK(contains(message, path.string()));
  CHECK(contains(message, "exceeds the 20-byte file"));

  write_raw(path, whole.substr(0, 5));
  message = open_error(path);
  CHECK(contains(message, path.string()));
  CHECK(contains(message, "is 5 bytes, too short"));

  message = open_error(dir.path() / "missing.safetensors");
  CHECK(contains(message, "cannot open safetensors file"));
  CHECK(contains(message, "No such file or directory"));
}

TEST_CASE("SafetensorsFile validates the header") {
  TempDir dir;
  fs::path path = dir.path() / "bad.safetensors";
  std::string data(16, '\0');
  auto check_error = [&](const std::string& header, const std::string& bytes,
                         const std::string& expected) {
    write_raw(path, safetensors_bytes(header, bytes));
    std::string message = open_error(path);
    CHECK_MESSAGE(contains(message, path.string()), message);
    CHECK_MESSAGE(contains(message, expected), message);
  };

  check_error(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,32]}})", data,
              "entry \"w\": data_offsets [0, 32] lie outside the 16-byte data buffer");
  check_error(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[-4,12]}})", data,
              "data_offsets [-4, 12] lie outside");
  check_error(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", data,
              "span 16 bytes, but dtype F32 and shape [3] need 12");
  check_error(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0]}})", data,
              "data_offsets must be [begin, end]");
  check_error(R"({"w":{"dtype":"Q4","shape":[4],"data_offsets":[0,16]}})", data,
              "entry \"w\": unknown safetensors dtype \"Q4\"");
  check_error(R"({"w":{"dtype":"F32","data_offsets":[0,16]}})", data, "missing key \"shape\"");
  check_error(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,16]}})", data,
              "expected an integer, got 2.5");
  check_error(R"({"w":{"dtype":"F32","shape":[-1,-4],"data_offsets":[0,16]}})", data,
              "shape [-1, -4] is invalid");
  check_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              std::string(12, '\0'),
              "tensor \"b\" starts at byte 4 of the data buffer, expected 8");
  check_error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data,
              "tensor \"w\" starts at byte 8 of the data buffer, expected 0");
  check_error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data,
              "tensors cover 8 bytes but the data buffer has 16");
  check_error(R"({"__metadata__":{"format":1}})", "",
              "entry \"__metadata__\": expected JSON string, got number");
  check_error(R"([1,2])", "", "header must be a JSON object, got array");
  check_error(R"({"w":)", "", "header is not valid JSON (invalid JSON at offset 8");
}

TEST_CASE("SafetensorsFile::at names the file and the tensor") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  write_safetensors(path, {{"w", "U8", {2}, {1, 2}}});
  SafetensorsFile file(path);
  std::string expected = "safetensors file " + path + " has no tensor \"lm_head.weight\"";
  CHECK_THROWS_WITH_AS(file.at("lm_head.weight"), doctest::Contains(expected.c_str()), Error);
}
