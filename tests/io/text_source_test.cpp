#include "io/text_source.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

using testing::TempDir;

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

// The documents as (prompt, text) pairs, which doctest can compare and print.
std::vector<std::pair<std::string, std::string>> pairs_of(const std::vector<Document>& documents) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Document& document : documents) pairs.emplace_back(document.prompt, document.text);
  return pairs;
}

// Pairs for plain documents: an empty prompt with each text.
std::vector<std::pair<std::string, std::string>> plain(const std::vector<std::string>& texts) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& text : texts) pairs.emplace_back("", text);
  return pairs;
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
  CHECK(pairs_of(documents) == plain({content}));
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
  CHECK(pairs_of(documents) == plain({"one", "two\nlines \xc3\xa9", "three"}));
  CHECK(finished);
}

TEST_CASE("prompt/response lines keep the prompt apart from the text, mixed with plain lines") {
  TempDir dir;
  const std::string path =
      dir.write("instruct.jsonl",
                "{\"prompt\": \"Q: 2+2?\\n\", \"response\": \"A: 4\", \"id\": 7}\n"
                "{\"text\": \"plain\"}\n"
                "{\"response\": \"\", \"prompt\": \"no answer\"}\n"
                "{\"prompt\": \"\", \"response\": \"no question\"}\n");
  const auto documents = read_documents(path, nullptr);
  CHECK(pairs_of(documents) ==
        std::vector<std::pair<std::string, std::string>>{
            {"Q: 2+2?\n", "A: 4"}, {"", "plain"}, {"no answer", ""}, {"", "no question"}});
}

TEST_CASE("JSONL errors name the file and the 1-based line") {
  TempDir dir;
  const std::string bad_json = dir.write("bad.jsonl", "{\"text\": \"ok\"}\n\n{\"text\": oops}\n");
  std::string message = error_of(bad_json);
  CHECK(contains(message, bad_json + ":3:"));
  CHECK(contains(message, "invalid JSON"));
  // Every line error says what a line must contain.
  CHECK(contains(message, "a string \"text\" field"));
  CHECK(contains(message, "string \"prompt\" and \"response\" fields"));

  const std::string no_text = dir.write("no_text.jsonl", "{\"text\": \"ok\"}\n{\"body\": \"x\"}\n");
  message = error_of(no_text);
  CHECK(contains(message, no_text + ":2:"));
  CHECK(contains(message, "no \"text\" field and no \"prompt\" and \"response\" fields"));

  const std::string not_string = dir.write("number.jsonl", "{\"text\": 5}\n");
  CHECK(contains(error_of(not_string), not_string + ":1: \"text\" is a JSON number"));

  const std::string not_object = dir.write("array.jsonl", "[\"text\"]\n");
  CHECK(contains(error_of(not_object), not_object + ":1: the line is a JSON array"));
}

TEST_CASE("a prompt/response line needs both fields, as strings, and no \"text\"") {
  TempDir dir;
  const std::string ok = "{\"prompt\": \"p\", \"response\": \"r\"}\n";
  const std::string no_response = dir.write("no_response.jsonl", ok + "{\"prompt\": \"p\"}\n");
  CHECK(contains(error_of(no_response), no_response + ":2: \"prompt\" without \"response\""));

  const std::string no_prompt = dir.write("no_prompt.jsonl", ok + ok + "{\"response\": \"r\"}\n");
  CHECK(contains(error_of(no_prompt), no_prompt + ":3: \"response\" without \"prompt\""));

  const std::string prompt_array =
      dir.write("prompt_array.jsonl", "{\"prompt\": [\"p\"], \"response\": \"r\"}\n");
  CHECK(contains(error_of(prompt_array), prompt_array + ":1: \"prompt\" is a JSON array"));

  const std::string response_null =
      dir.write("response_null.jsonl", "\n{\"prompt\": \"p\", \"response\": null}\n");
  CHECK(contains(error_of(response_null), response_null + ":2: \"response\" is a JSON null"));

  const std::string both =
      dir.write("both.jsonl", "{\"text\": \"t\", \"prompt\": \"p\", \"response\": \"r\"}\n");
  const std::string message = error_of(both);
  CHECK(contains(message, both + ":1: the line has both \"text\" and \"prompt\""));
  CHECK(contains(message, "one form or the other"));

  const std::string text_and_response =
      dir.write("text_and_response.jsonl", "{\"text\": \"t\", \"response\": \"r\"}\n");
  CHECK(contains(error_of(text_and_response), "both \"text\" and \"response\""));
}

TEST_CASE("an input with no documents or no text is an empty dataset, named") {
  TempDir dir;
  const std::string missing = dir.file("missing.txt");
  CHECK(contains(error_of(missing), missing));

  const std::string empty_text = dir.write("empty.txt", "");
  std::string message = error_of(empty_text);
  CHECK(contains(message, empty_text + "' has no documents (the file is empty)"));
  CHECK(contains(message, "the dataset is empty"));

  const std::string empty_jsonl = dir.write("empty.jsonl", "");
  CHECK(contains(error_of(empty_jsonl), empty_jsonl + "' has no documents"));

  const std::string blank_jsonl = dir.write("blank.jsonl", "\n  \n\r\n");
  message = error_of(blank_jsonl);
  CHECK(contains(message, blank_jsonl + "' has no documents"));
  CHECK(contains(message, "every line is blank"));
  CHECK(contains(message, "the dataset is empty"));

  const std::string empty_strings = dir.write(
      "empty_strings.jsonl", "{\"text\": \"\"}\n{\"prompt\": \"\", \"response\": \"\"}\n");
  message = error_of(empty_strings);
  CHECK(contains(message, empty_strings + "' holds no text"));
  CHECK(contains(message, "the dataset is empty"));

  CHECK(contains(error_of(dir.path().string()), "is a directory"));
}

TEST_CASE("text that is not UTF-8 is refused naming the file, line and byte offset") {
  TempDir dir;
  // Latin-1 "é" (0xE9) on line 3, at byte offset 11; it was tokenized as it stood.
  const std::string latin1 = dir.write("latin1.txt", "one\ntwo\ncaf\xE9\n");
  CHECK(error_of(latin1) == "input '" + latin1 +
                                "' line 3, byte offset 11: byte 0xE9 is not UTF-8 text; llmft "
                                "prepare reads UTF-8: convert the file first (e.g. iconv -f "
                                "LATIN1 -t UTF-8)");
  // A sequence cut short inside a JSON string, on the second line.
  const std::string cut = dir.write("cut.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"\xC3\"}\n");
  CHECK(contains(error_of(cut), cut + "' line 2, byte offset 25: byte 0xC3 is not UTF-8"));
  // Overlong encodings and surrogates are not UTF-8 either; 4-byte characters are.
  CHECK(contains(error_of(dir.write("overlong.txt", "\xC0\xAF")), "byte 0xC0"));
  CHECK(contains(error_of(dir.write("surrogate.txt", "a\xED\xA0\x80")), "byte offset 1"));
  CHECK(read_documents(dir.write("emoji.txt", "\xF0\x9F\x98\x80 \xC3\xA9"), nullptr).size() == 1);
}

// The conversation of the only line of `path`, as (role, content) pairs.
std::vector<std::pair<std::string, std::string>> messages_of(const std::string& path) {
  const std::vector<Document> documents = read_documents(path, nullptr);
  REQUIRE(documents.size() == 1);
  std::vector<std::pair<std::string, std::string>> messages;
  for (const ChatMessage& message : documents[0].conversation) {
    messages.emplace_back(message.role, message.content);
  }
  return messages;
}

TEST_CASE("conversation lines: messages, conversations and ShareGPT's from/value") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"system", "Be brief."}, {"user", "Hi \u00e9"}, {"assistant", "Hello."}};
  CHECK(messages_of(dir.write("messages.jsonl",
                              "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
                              "{\"role\": \"user\", \"content\": \"Hi \\u00e9\"}, {\"role\": "
                              "\"assistant\", \"content\": \"Hello.\"}], \"id\": 7}\n")) ==
        expected);
  CHECK(messages_of(dir.write("sharegpt.jsonl",
                              "{\"conversations\": [{\"from\": \"system\", \"value\": \"Be "
                              "brief.\"}, {\"from\": \"human\", \"value\": \"Hi \u00e9\"}, "
                              "{\"from\": \"gpt\", \"value\": \"Hello.\"}]}\n")) == expected);
  CHECK(messages_of(dir.write("conversations_roles.jsonl",
                              "{\"conversations\": [{\"role\": \"user\", \"content\": \"Q\"}, "
                              "{\"role\": \"assistant\", \"content\": \"A\"}]}\n")) ==
        std::vector<std::pair<std::string, std::string>>{{"user", "Q"}, {"assistant", "A"}});
  // Lines of one file may mix the forms; each keeps its line number.
  const auto documents =
      read_documents(dir.write("mixed.jsonl",
                               "{\"text\": \"t\"}\n\n{\"messages\": [{\"role\": \"assistant\", "
                               "\"content\": \"A\"}]}\n"),
                     nullptr);
  REQUIRE(documents.size() == 2);
  CHECK_FALSE(documents[0].is_conversation());
  CHECK(documents[0].line == 1);
  CHECK(documents[1].is_conversation());
  CHECK(documents[1].line == 3);
}

TEST_CASE("a malformed conversation line is refused naming the file, the line and the message") {
  TempDir dir;
  const std::string ok = "{\"text\": \"t\"}\n";
  const auto error_for = [&](const std::string& name, const std::string& line) {
    return error_of(dir.write(name, ok + line + "\n"));
  };
  CHECK(contains(error_for("a.jsonl", "{\"messages\": []}"),
                 "a.jsonl:2: \"messages\" must be a non-empty array of messages"));
  CHECK(contains(error_for("b.jsonl", "{\"messages\": {\"role\": \"user\"}}"),
                 "b.jsonl:2: \"messages\" must be a non-empty array"));
  CHECK(contains(error_for("c.jsonl", "{\"messages\": [\"hi\"]}"),
                 "c.jsonl:2: message 1 is a JSON string, not an object"));
  CHECK(contains(error_for("d.jsonl", "{\"messages\": [{\"role\": \"bot\", \"content\": \"x\"}]}"),
                 "d.jsonl:2: message 1 has the role \"bot\""));
  CHECK(contains(error_for("e.jsonl", "{\"messages\": [{\"from\": \"user\", \"value\": \"x\"}]}"),
                 "e.jsonl:2: message 1 has the from \"user\""));
  CHECK(contains(error_for("f.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": 3}]}"),
                 "f.jsonl:2: message 1 has no string \"content\""));
  CHECK(contains(error_for("g.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}"),
                 "g.jsonl:2: the conversation has no assistant message"));
  CHECK(contains(error_for("h.jsonl",
                           "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, "
                           "{\"role\": \"assistant\", \"content\": \" \\n\"}]}"),
                 "h.jsonl:2: message 2 is an assistant message with no text"));
  CHECK(contains(error_for("i.jsonl",
                           "{\"messages\": [{\"role\": \"user\", \"from\": \"human\", "
                           "\"content\": \"x\"}]}"),
                 "i.jsonl:2: message 1 has both \"role\" and \"from\""));
  const std::string two = error_for("j.jsonl", "{\"messages\": [], \"text\": \"t\"}");
  CHECK(contains(two, "j.jsonl:2: the line has both \"messages\" and \"text\""));
  CHECK(contains(two, "{\"messages\": [{\"role\": \"user\""));  // says what a line may be
  CHECK(contains(error_for("k.jsonl", "{\"messages\": [], \"conversations\": []}"),
                 "both \"messages\" and \"conversations\""));
}

}  // namespace
}  // namespace llmft::io
