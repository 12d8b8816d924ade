#include "io/text_source.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp directory, removed with its contents.
struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("llmft_text_source_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& content) const {
    const std::string file = (path / name).string();
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }
};

std::string error_of(const std::string& path) {
  try {
    read_documents(path, nullptr);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("a plain text file is one document, read exactly") {
  TempDir dir;
  const std::string content = "First line.\n\n{\"text\": \"not parsed\"}\nLast line";
  const std::string path = dir.write("corpus.txt", content);
  size_t last_done = 0, last_total = 0;
  const auto documents = read_documents(path, [&](size_t done, size_t total) {
    CHECK(done >= last_done);
    last_done = done;
    last_total = total;
  });
  CHECK(documents == std::vector<std::string>{content});
  CHECK(last_done == content.size());
  CHECK(last_total == content.size());
}

TEST_CASE("a JSONL file gives one document per non-blank line") {
  TempDir dir;
  const std::string path = dir.write(
      "corpus.jsonl",
      "{\"text\": \"one\", \"id\": 1}\n\n   \n{\"id\": 2, \"text\": \"two\\nlines \\u00e9\"}\r\n"
      "{\"text\": \"three\"}");
  bool finished = false;
  const auto documents =
      read_documents(path, [&](size_t done, size_t total) { finished = done == total; });
  CHECK(documents == std::vector<std::string>{"one", "two\nlines \xc3\xa9", "three"});
  CHECK(finished);
}

TEST_CASE("JSONL errors name the file and the 1-based line") {
  TempDir dir;
  const std::string bad_json = dir.write("bad.jsonl", "{\"text\": \"ok\"}\n\n{\"text\": oops}\n");
  std::string message = error_of(bad_json);
  CHECK(contains(message, bad_json + ":3:"));
  CHECK(contains(message, "invalid JSON"));
  CHECK(contains(message, "\"text\""));

  const std::string no_text = dir.write("no_text.jsonl", "{\"text\": \"ok\"}\n{\"body\": \"x\"}\n");
  message = error_of(no_text);
  CHECK(contains(message, no_text + ":2:"));
  CHECK(contains(message, "no \"text\" field"));

  const std::string not_string = dir.write("number.jsonl", "{\"text\": 5}\n");
  CHECK(contains(error_of(not_string), not_string + ":1: \"text\" is a number"));

  const std::string not_object = dir.write("array.jsonl", "[\"text\"]\n");
  CHECK(contains(error_of(not_object), not_object + ":1: the line is a JSON array"));
}

TEST_CASE("missing, empty and textless inputs are errors that name the path") {
  TempDir dir;
  const std::string missing = (dir.path / "missing.txt").string();
  CHECK(contains(error_of(missing), missing));

  const std::string empty_text = dir.write("empty.txt", "");
  CHECK(contains(error_of(empty_text), empty_text + "' holds no text"));

  const std::string blank_jsonl = dir.write("blank.jsonl", "\n\n");
  CHECK(contains(error_of(blank_jsonl), blank_jsonl + "' holds no text"));

  const std::string empty_texts = dir.write("empty_texts.jsonl", "{\"text\": \"\"}\n");
  CHECK(contains(error_of(empty_texts), "every \"text\" is empty"));

  CHECK(contains(error_of(dir.path.string()), "is a directory"));
}

}  // namespace
}  // namespace llmft::io
