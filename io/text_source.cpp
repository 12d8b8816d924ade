#include "io/text_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/json.h"

namespace llmft::io {
namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// Opens `path` for reading and returns its size, or throws naming the path.
size_t open_input(const std::string& path, std::ifstream& in) {
  namespace fs = std::filesystem;
  std::error_code error;
  LLMFT_REQUIRE(!fs::is_directory(path, error),
                "input '" << path << "' is a directory; pass a .jsonl or plain text file");
  in.open(path, std::ios::binary);
  LLMFT_REQUIRE(in.is_open(), "cannot open input '" << path << "': " << std::strerror(errno)
                                                    << "; check the path and its permissions");
  const auto bytes = fs::file_size(path, error);
  LLMFT_REQUIRE(!error, "cannot read the size of input '" << path << "': " << error.message());
  return static_cast<size_t>(bytes);
}

void report(const ReadProgress& progress, size_t bytes_done, size_t bytes_total) {
  if (progress) progress(std::min(bytes_done, bytes_total), bytes_total);
}

std::string parse_jsonl_text(const std::string& path, size_t line_number, const std::string& line) {
  const char* fix =
      "; every non-blank line of a .jsonl file must be a JSON object with a "
      "string \"text\" field, like {\"text\": \"...\"}";
  Json value;
  try {
    value = Json::parse(line);
  } catch (const Error& parse_error) {
    LLMFT_FAIL(path << ":" << line_number << ": " << parse_error.what() << fix);
  }
  LLMFT_REQUIRE(value.is_object(), path << ":" << line_number << ": the line is a JSON "
                                        << Json::kind_name(value.kind()) << ", not an object"
                                        << fix);
  const Json* text = value.find("text");
  LLMFT_REQUIRE(text != nullptr, path << ":" << line_number << ": no \"text\" field" << fix);
  LLMFT_REQUIRE(text->is_string(), path << ":" << line_number << ": \"text\" is a "
                                        << Json::kind_name(text->kind()) << ", not a string"
                                        << fix);
  return text->as_string();
}

std::vector<std::string> read_jsonl(const std::string& path, std::ifstream& in, size_t bytes_total,
                                    const ReadProgress& progress) {
  std::vector<std::string> documents;
  std::string line;
  size_t bytes_done = 0;
  for (size_t line_number = 1; std::getline(in, line); ++line_number) {
    bytes_done += line.size() + 1;
    if (!is_blank(line)) documents.push_back(parse_jsonl_text(path, line_number, line));
    report(progress, bytes_done, bytes_total);
  }
  LLMFT_REQUIRE(!in.bad(), "error while reading input '" << path << "'");
  return documents;
}

std::string read_plain_text(const std::string& path, std::ifstream& in, size_t bytes_total,
                            const ReadProgress& progress) {
  std::string text;
  text.reserve(bytes_total);
  std::vector<char> chunk(kReadChunkBytes);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    report(progress, text.size(), bytes_total);
  }
  LLMFT_REQUIRE(!in.bad(), "error while reading input '" << path << "'");
  return text;
}

}  // namespace

std::vector<std::string> read_documents(const std::string& path, const ReadProgress& progress) {
  std::ifstream in;
  const size_t bytes_total = open_input(path, in);
  std::vector<std::string> documents;
  if (ends_with(path, ".jsonl")) {
    documents = read_jsonl(path, in, bytes_total, progress);
  } else {
    documents.push_back(read_plain_text(path, in, bytes_total, progress));
  }
  size_t text_bytes = 0;
  for (const std::string& document : documents) text_bytes += document.size();
  LLMFT_REQUIRE(text_bytes > 0, "input '" << path << "' holds no text"
                                          << (documents.empty() ? "" : " (every \"text\" is empty)")
                                          << "; pass a file with some text in it");
  return documents;
}

}  // namespace llmft::io
