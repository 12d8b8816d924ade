#include "io/text_source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/text_affixes.h"
#include "io/json.h"
#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;

// Appended to every error about a JSONL line.
constexpr const char* kJsonlLineForms =
    "; every non-blank line of a .jsonl file must be a JSON object with either a string "
    "\"text\" field, like {\"text\": \"...\"}, or string \"prompt\" and \"response\" fields, "
    "like {\"prompt\": \"...\", \"response\": \"...\"}, or a conversation, like "
    "{\"messages\": [{\"role\": \"user\", \"content\": \"...\"}, {\"role\": \"assistant\", "
    "\"content\": \"...\"}]}";
// The keys a conversation may be under, and the message spellings.
constexpr const char* kConversationKeys[] = {"messages", "conversations"};
constexpr const char* kMessageForms =
    "; a message is {\"role\": \"system\"|\"user\"|\"assistant\", \"content\": \"...\"} or, as "
    "ShareGPT writes it, {\"from\": \"system\"|\"human\"|\"gpt\", \"value\": \"...\"}";

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

// Throws naming the file, the line and the byte offset of the first byte of `text` that is
// not well-formed UTF-8. `text` starts at byte `offset` of the file, on line `line`.
void require_utf8(std::string_view text, const std::string& path, size_t line, size_t offset) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Char c = utf8_char_at(text, pos);
    if (c.code_point != kNotUtf8) {
      pos += c.length;
      continue;
    }
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(text[pos] & 0xFF));
    const size_t bad_line =
        line + static_cast<size_t>(std::count(text.begin(), text.begin() + pos, '\n'));
    LLMFT_FAIL("input '" << path << "' line " << bad_line << ", byte offset " << offset + pos
                         << ": byte " << byte << " is not UTF-8 text; llmft prepare reads "
                         << "UTF-8: convert the file first (e.g. iconv -f LATIN1 -t UTF-8)");
  }
}

// The string member `key` of the JSONL line `object`, or nullptr when it has none.
// `where` is "path:line" for the error thrown when the member is not a string.
const std::string* string_member(const Json& object, const char* key, const std::string& where) {
  const Json* member = object.find(key);
  if (member == nullptr) return nullptr;
  LLMFT_REQUIRE(member->is_string(), where << ": \"" << key << "\" is a JSON "
                                           << Json::kind_name(member->kind()) << ", not a string"
                                           << kJsonlLineForms);
  return &member->as_string();
}

// Message `index` of a conversation, in either spelling, with ShareGPT's roles mapped to
// the template's ("human" -> "user", "gpt" -> "assistant").
ChatMessage parse_message(const Json& message, size_t index, const std::string& where) {
  const std::string at = where + ": message " + std::to_string(index + 1);
  LLMFT_REQUIRE(message.is_object(), at << " is a JSON " << Json::kind_name(message.kind())
                                        << ", not an object" << kMessageForms);
  const bool sharegpt = message.find("from") != nullptr;
  LLMFT_REQUIRE(!sharegpt || message.find("role") == nullptr,
                at << " has both \"role\" and \"from\"" << kMessageForms);
  const char* role_key = sharegpt ? "from" : "role";
  const char* content_key = sharegpt ? "value" : "content";
  const Json* role = message.find(role_key);
  const Json* content = message.find(content_key);
  LLMFT_REQUIRE(role != nullptr && role->is_string(),
                at << " has no string \"role\" (or \"from\")" << kMessageForms);
  LLMFT_REQUIRE(content != nullptr && content->is_string(),
                at << " has no string \"" << content_key << "\"" << kMessageForms);
  const std::string& given = role->as_string();
  std::string name;
  if (sharegpt) {
    name = given == "human"    ? "user"
           : given == "gpt"    ? "assistant"
           : given == "system" ? given
                               : "";
  } else if (given == "system" || given == "user" || given == "assistant") {
    name = given;
  }
  LLMFT_REQUIRE(!name.empty(),
                at << " has the " << role_key << " " << Json::quote(given) << kMessageForms);
  return {std::move(name), content->as_string()};
}

// The conversation under `key` of the JSONL line `object`.
Conversation parse_conversation(const Json& messages, const char* key, const std::string& where) {
  LLMFT_REQUIRE(
      messages.is_array() && !messages.as_array().empty(),
      where << ": \"" << key << "\" must be a non-empty array of messages" << kMessageForms);
  Conversation conversation;
  bool has_assistant = false;
  for (const Json& message : messages.as_array()) {
    conversation.push_back(parse_message(message, conversation.size(), where));
    if (conversation.back().role != "assistant") continue;
    has_assistant = true;
    LLMFT_REQUIRE(conversation.back().content.find_first_not_of(" \t\n\r\f\v") != std::string::npos,
                  where << ": message " << conversation.size() << " is an assistant message with "
                        << "no text, which teaches nothing; write the reply or drop the message");
  }
  LLMFT_REQUIRE(has_assistant, where << ": the conversation has no assistant message, so "
                                     << "nothing in it would be trained on; add the reply or "
                                     << "drop the line");
  return conversation;
}

Document parse_jsonl_document(const std::string& path, size_t line_number,
                              const std::string& line) {
  const std::string where = path + ":" + std::to_string(line_number);
  Json value;
  try {
    value = Json::parse(line);
  } catch (const Error& parse_error) {
    LLMFT_FAIL(where << ": " << parse_error.what() << kJsonlLineForms);
  }
  LLMFT_REQUIRE(value.is_object(), where << ": the line is a JSON " << Json::kind_name(value.kind())
                                         << ", not an object" << kJsonlLineForms);
  const std::string* text = string_member(value, "text", where);
  const std::string* prompt = string_member(value, "prompt", where);
  const std::string* response = string_member(value, "response", where);
  std::vector<const char*> forms;  // the keys of the forms the line has
  for (const char* key : kConversationKeys) {
    if (value.find(key) != nullptr) forms.push_back(key);
  }
  if (text != nullptr) forms.push_back("text");
  if (prompt != nullptr || response != nullptr) forms.push_back(prompt ? "prompt" : "response");
  LLMFT_REQUIRE(forms.size() <= 1, where << ": the line has both \"" << forms[0] << "\" and \""
                                         << forms[1] << "\", but it must be one form or the other"
                                         << kJsonlLineForms);
  for (const char* key : kConversationKeys) {
    if (const Json* messages = value.find(key)) {
      return {"", "", parse_conversation(*messages, key, where), line_number};
    }
  }
  if (text != nullptr) return {"", *text, {}, line_number};
  LLMFT_REQUIRE(prompt != nullptr || response != nullptr,
                where << ": no \"text\" field and no \"prompt\" and \"response\" fields (and "
                      << "no \"messages\")" << kJsonlLineForms);
  LLMFT_REQUIRE(prompt != nullptr, where << ": \"response\" without \"prompt\"" << kJsonlLineForms);
  LLMFT_REQUIRE(response != nullptr,
                where << ": \"prompt\" without \"response\"" << kJsonlLineForms);
  return {*prompt, *response, {}, line_number};
}

std::vector<Document> read_jsonl(const std::string& path, std::ifstream& in, size_t bytes_total,
                                 const ReadProgress& progress) {
  std::vector<Document> documents;
  std::string line;
  size_t bytes_done = 0;
  for (size_t line_number = 1; std::getline(in, line); ++line_number) {
    require_utf8(line, path, line_number, bytes_done);
    bytes_done += line.size() + 1;
    if (!is_blank(line)) documents.push_back(parse_jsonl_document(path, line_number, line));
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

// Throws "the dataset is empty" when `documents` hold no byte of text.
void require_some_text(const std::string& path, bool jsonl,
                       const std::vector<Document>& documents) {
  LLMFT_REQUIRE(
      !documents.empty(),
      "input '" << path << "' has no documents ("
                << (jsonl ? "the file is empty or every line is blank" : "the file is empty")
                << "): the dataset is empty; pass a file with some text in it");
  size_t text_bytes = 0;
  for (const Document& document : documents) {
    text_bytes += document.prompt.size() + document.text.size();
    for (const ChatMessage& message : document.conversation) text_bytes += message.content.size();
  }
  LLMFT_REQUIRE(text_bytes > 0, "input '" << path << "' holds no text (every \"text\", \"prompt\", "
                                          << "\"response\" and message is empty): the dataset is "
                                          << "empty; pass a file with some text in it");
}

}  // namespace

std::vector<Document> read_documents(const std::string& path, const ReadProgress& progress) {
  std::ifstream in;
  const size_t bytes_total = open_input(path, in);
  const bool jsonl = ends_with(path, ".jsonl");
  std::vector<Document> documents;
  if (jsonl) {
    documents = read_jsonl(path, in, bytes_total, progress);
  } else {
    std::string text = read_plain_text(path, in, bytes_total, progress);
    require_utf8(text, path, 1, 0);
    if (!text.empty()) documents.push_back({"", std::move(text), {}, 0});
  }
  require_some_text(path, jsonl, documents);
  return documents;
}

}  // namespace llmft::io
