// ChatTemplate::find: where a chat template is looked up and how tokenizer_config.json's
// forms are read. Rendering is checked against transformers by
// tests/oracle/chat_template_oracle.py, which needs the Python environment.
#include "io/chat_template.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

using testing::TempDir;

std::string find_error(const std::string& dir, const std::string& file) {
  try {
    ChatTemplate::find(dir, file);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("the chat template is --chat-template, else chat_template.jinja, else the config's") {
  TempDir dir;
  const std::string tokenizer = dir.path().string();
  CHECK_FALSE(ChatTemplate::find(tokenizer, "").has_value());
  CHECK_FALSE(ChatTemplate::find("", "").has_value());
  CHECK(contains(ChatTemplate::describe_search(tokenizer, ""), "chat_template.jinja"));

  dir.write("tokenizer_config.json",
            "{\"chat_template\": \"from config\", \"bos_token\": \"<s>\", \"eos_token\": "
            "{\"content\": \"</s>\", \"lstrip\": false}, \"pad_token\": null}");
  std::optional<ChatTemplate> found = ChatTemplate::find(tokenizer, "");
  REQUIRE(found.has_value());
  CHECK(found->origin() == dir.file("tokenizer_config.json") + ": chat_template");
  CHECK(found->special_tokens() ==
        std::map<std::string, std::string>{{"bos_token", "<s>"}, {"eos_token", "</s>"}});

  dir.write("chat_template.jinja", "from file");
  found = ChatTemplate::find(tokenizer, "");
  REQUIRE(found.has_value());
  CHECK(found->origin() == dir.file("chat_template.jinja"));

  const std::string explicit_file = dir.write("mine.jinja", "mine");
  found = ChatTemplate::find(tokenizer, explicit_file);
  REQUIRE(found.has_value());
  CHECK(found->origin() == explicit_file);
  CHECK(found->special_tokens().at("eos_token") == "</s>");  // still the tokenizer's tokens
  // --chat-template works without a tokenizer directory too.
  CHECK(ChatTemplate::find("", explicit_file).has_value());
}

TEST_CASE("a list of named templates in tokenizer_config.json gives the default one") {
  TempDir dir;
  dir.write("tokenizer_config.json",
            "{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"t\"}, "
            "{\"name\": \"default\", \"template\": \"d\"}]}");
  CHECK(ChatTemplate::find(dir.path().string(), "").has_value());

  dir.write("tokenizer_config.json",
            "{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"t\"}]}");
  const std::string message = find_error(dir.path().string(), "");
  CHECK(contains(message, "lists the templates tool_use but none named \"default\""));
  CHECK(contains(message, "--chat-template FILE"));
}

TEST_CASE("malformed template sources are errors naming the file") {
  TempDir dir;
  const std::string tokenizer = dir.path().string();
  CHECK(contains(find_error(tokenizer, dir.file("missing.jinja")),
                 "cannot read --chat-template '" + dir.file("missing.jinja") + "'"));
  dir.write("tokenizer_config.json", "{\"chat_template\": 5}");
  CHECK(contains(find_error(tokenizer, ""), "\"chat_template\" must be a string or a list"));
  dir.write("tokenizer_config.json", "{\"chat_template\": [{\"name\": \"default\"}]}");
  CHECK(contains(find_error(tokenizer, ""), "an entry is {\"name\":\"default\"}"));
  dir.write("tokenizer_config.json", "{\"eos_token\": 3}");
  CHECK(contains(find_error(tokenizer, ""), "\"eos_token\" must be a string or an object"));
  dir.write("tokenizer_config.json", "{\"chat_template\": ");
  CHECK(contains(find_error(tokenizer, ""), dir.file("tokenizer_config.json") + ": invalid JSON"));
}

TEST_CASE("a renderer that cannot start or answers nonsense is one clear line") {
  const ChatTemplate chat_template("{{ messages }}", "t.jinja", {});
  const std::vector<Conversation> one = {{{"user", "hi"}, {"assistant", "yo"}}};
  const auto render_error = [&](const char* python) {
    setenv("LLMFT_PYTHON", python, 1);
    std::string message;
    try {
      chat_template.render(one, false);
    } catch (const Error& error) {
      message = error.what();
    }
    unsetenv("LLMFT_PYTHON");
    return message;
  };
  std::string message = render_error("/nonexistent/python3");
  CHECK(contains(message, "cannot run '/nonexistent/python3'"));
  CHECK(contains(message, "python3-jinja2"));
  message = render_error("false");  // runs, prints nothing, exits 1
  CHECK(contains(message, "rendering chat template t.jinja with 'false' failed (exit 1)"));
  CHECK(message.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace llmft::io
