#include "io/metrics.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using llmft::Error;
using llmft::io::Json;
using llmft::io::MetricsWriter;
using llmft::testing::TempDir;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("MetricsWriter writes one flushed JSON line per call") {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  MetricsWriter writer(path);
  CHECK(writer.enabled());
  CHECK(writer.path() == path);
  writer.write(Json::object({{"step", Json::number(1)}, {"loss", Json::number(2.5)}}));
  // Flushed: visible to a reader while the writer is still open.
  CHECK(read_all(path) == "{\"step\":1,\"loss\":2.5}\n");
  writer.write(Json::object({{"step", Json::number(2)}, {"note", Json::string("a\nb")}}));
  CHECK(read_all(path) == "{\"step\":1,\"loss\":2.5}\n{\"step\":2,\"note\":\"a\\nb\"}\n");
}

TEST_CASE("MetricsWriter appends to an existing file") {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  MetricsWriter(path).write(Json::object({{"step", Json::number(1)}}));
  MetricsWriter(path).write(Json::object({{"step", Json::number(2)}}));
  CHECK(read_all(path) == "{\"step\":1}\n{\"step\":2}\n");
}

TEST_CASE("MetricsWriter with an empty path is disabled") {
  MetricsWriter writer("");
  CHECK_FALSE(writer.enabled());
  writer.write(Json::object({{"step", Json::number(1)}}));
}

TEST_CASE("MetricsWriter errors name the path") {
  TempDir dir;
  std::string path = dir.file("missing_dir/metrics.jsonl");
  std::string expected = "cannot open metrics file " + path + ": No such file or directory";
  CHECK_THROWS_WITH_AS(MetricsWriter{path}, doctest::Contains(expected.c_str()), Error);

  MetricsWriter writer(dir.file("metrics.jsonl"));
  CHECK_THROWS_WITH_AS(writer.write(Json::number(1)),
                       doctest::Contains("must be a JSON object, got number"), Error);
}

TEST_CASE("MetricsWriter on a full disk warns, stops writing and does not throw") {
  // /dev/full accepts the open and fails every write with ENOSPC, as a full filesystem does.
  MetricsWriter writer("/dev/full");
  REQUIRE(writer.enabled());
  CHECK_NOTHROW(writer.write(Json::object({{"step", Json::number(1)}})));
  CHECK_FALSE(writer.enabled());
  CHECK_NOTHROW(writer.write(Json::object({{"step", Json::number(2)}})));
}
