#include "io/chat_template.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "io/chat_template_python.h"
#include "io/json.h"
#include "io/subprocess.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTemplateFileName = "chat_template.jinja";
constexpr const char* kConfigFileName = "tokenizer_config.json";
// The special tokens transformers passes to a template (its special_tokens_map).
constexpr const char* kSpecialTokenNames[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                              "pad_token", "cls_token", "mask_token"};
constexpr const char* kInstallJinja =
    "install Python 3 with Jinja2 (Debian: apt-get install python3-jinja2; else pip install "
    "jinja2), or set LLMFT_PYTHON to a Python that has it";

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in.is_open(), "cannot read " << what << " '" << path << "': check the path");
  std::stringstream text;
  text << in.rdbuf();
  LLMFT_REQUIRE(!in.bad(), "error while reading " << what << " '" << path << "'");
  return text.str();
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// The tokens a template reads from tokenizer_config.json: each name's string, or the
// "content" of an AddedToken object.
std::map<std::string, std::string> special_tokens_of(const Json& config, const std::string& path) {
  std::map<std::string, std::string> tokens;
  for (const char* name : kSpecialTokenNames) {
    const Json* value = config.find(name);
    if (value == nullptr || value->is_null()) continue;
    const Json* content = value->is_object() ? value->find("content") : value;
    LLMFT_REQUIRE(content != nullptr && content->is_string(),
                  path << ": \"" << name << "\" must be a string or an object with a string "
                       << "\"content\", not " << value->dump());
    tokens[name] = content->as_string();
  }
  return tokens;
}

// tokenizer_config.json's "chat_template": a string, or the "default" of a list of
// {"name", "template"}; nullopt when it has none.
std::optional<std::string> config_template(const Json& config, const std::string& path) {
  const Json* value = config.find("chat_template");
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (value->is_string()) return value->as_string();
  const std::string expected =
      ": \"chat_template\" must be a string or a list of {\"name\": "
      "..., \"template\": ...} objects";
  LLMFT_REQUIRE(value->is_array(),
                path << expected << ", not a " << Json::kind_name(value->kind()));
  std::string names;
  for (const Json& entry : value->as_array()) {
    const Json* name = entry.find("name");
    const Json* text = entry.find("template");
    LLMFT_REQUIRE(name != nullptr && name->is_string() && text != nullptr && text->is_string(),
                  path << expected << "; an entry is " << entry.dump());
    if (name->as_string() == "default") return text->as_string();
    names += (names.empty() ? "" : ", ") + name->as_string();
  }
  LLMFT_FAIL(path << ": \"chat_template\" lists the templates " << names
                  << " but none named \"default\"; pass the one to use with --chat-template FILE");
}

// Replaces the line breaks of Jinja's and Python's messages, so an error is one line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// The last line of `text` that is not empty ("" for none).
std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t begin = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(begin, end + 1 - begin);
}

// Line `line` (1-based) of `text`, trimmed and shortened for a message.
std::string line_of(const std::string& text, size_t line) {
  std::istringstream lines(text);
  std::string current;
  for (size_t i = 0; i < line && std::getline(lines, current); ++i) {
  }
  const size_t begin = current.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  current = current.substr(begin, current.find_last_not_of(" \t\r") + 1 - begin);
  constexpr size_t kShown = 80;
  return current.size() > kShown ? current.substr(0, kShown) + "..." : current;
}

Json request_of(const std::string& text, const std::map<std::string, std::string>& special,
                const std::vector<Conversation>& conversations, bool add_generation_prompt) {
  Json::Object tokens;
  for (const auto& [name, token] : special) tokens.emplace_back(name, Json::string(token));
  Json::Array all;
  for (const Conversation& conversation : conversations) {
    Json::Array messages;
    for (const ChatMessage& message : conversation) {
      messages.push_back(Json::object(
          {{"role", Json::string(message.role)}, {"content", Json::string(message.content)}}));
    }
    all.push_back(Json::array(std::move(messages)));
  }
  return Json::object({{"template", Json::string(text)},
                       {"special_tokens", Json::object(std::move(tokens))},
                       {"add_generation_prompt", Json::boolean(add_generation_prompt)},
                       {"conversations", Json::array(std::move(all))}});
}

// Python's start and Jinja2 at 100 KB/s or more: far beyond what a working render needs,
// short of a stuck interpreter holding a job for hours.
double render_timeout_seconds(size_t request_bytes) {
  return 120 + 10 * static_cast<double>(request_bytes) / 1e6;
}

}  // namespace

ChatTemplate::ChatTemplate(std::string text, std::string origin,
                           std::map<std::string, std::string> special_tokens)
    : text_(std::move(text)),
      origin_(std::move(origin)),
      special_tokens_(std::move(special_tokens)) {}

std::optional<ChatTemplate> ChatTemplate::find(const std::string& tokenizer_dir,
                                               const std::string& explicit_file) {
  const fs::path config_path = fs::path(tokenizer_dir) / kConfigFileName;
  std::optional<Json> config;
  if (!tokenizer_dir.empty() && is_file(config_path)) {
    try {
      config = Json::parse(read_file(config_path.string(), "tokenizer config"));
    } catch (const Error& error) {
      LLMFT_FAIL(config_path.string() << ": " << error.what());
    }
    LLMFT_REQUIRE(config->is_object(), config_path.string() << ": must be a JSON object, not "
                                                            << Json::kind_name(config->kind()));
  }
  std::map<std::string, std::string> special =
      config ? special_tokens_of(*config, config_path.string())
             : std::map<std::string, std::string>{};
  if (!explicit_file.empty()) {
    return ChatTemplate(read_file(explicit_file, "--chat-template"), explicit_file,
                        std::move(special));
  }
  if (tokenizer_dir.empty()) return std::nullopt;
  const fs::path beside = fs::path(tokenizer_dir) / kTemplateFileName;
  if (is_file(beside)) {
    return ChatTemplate(read_file(beside.string(), "chat template"), beside.string(),
                        std::move(special));
  }
  if (!config) return std::nullopt;
  std::optional<std::string> text = config_template(*config, config_path.string());
  if (!text) return std::nullopt;
  return ChatTemplate(std::move(*text), config_path.string() + ": chat_template",
                      std::move(special));
}

std::string ChatTemplate::describe_search(const std::string& tokenizer_dir,
                                          const std::string& explicit_file) {
  if (!explicit_file.empty()) return explicit_file;
  if (tokenizer_dir.empty()) return "no --chat-template and a tokenizer without files";
  return "no --chat-template, no " + (fs::path(tokenizer_dir) / kTemplateFileName).string() +
         ", no \"chat_template\" in " + (fs::path(tokenizer_dir) / kConfigFileName).string();
}

std::vector<std::string> ChatTemplate::render(const std::vector<Conversation>& conversations,
                                              bool add_generation_prompt,
                                              const std::vector<std::string>& names) const {
  const char* configured = std::getenv("LLMFT_PYTHON");
  const std::string python = configured != nullptr && *configured != '\0' ? configured : "python3";
  const std::string request =
      request_of(text_, special_tokens_, conversations, add_generation_prompt).dump();
  SubprocessResult result;
  try {
    result = run_subprocess({python, "-c", kChatTemplatePython}, request,
                            render_timeout_seconds(request.size()));
  } catch (const Error& error) {
    LLMFT_FAIL("chat templates are rendered by Python's Jinja2, but " << error.what() << "; "
                                                                      << kInstallJinja);
  }
  Json reply;
  try {
    reply = Json::parse(result.out);
  } catch (const Error&) {
    LLMFT_FAIL("rendering chat template "
               << origin_ << " with '" << python << "' failed (exit " << result.exit_status << "): "
               << one_line(last_line(result.err)) << "; check that '" << python << "' is Python 3");
  }
  if (const Json* kind = reply.find("error")) {
    const std::string message = one_line(reply.at("message").as_string());
    LLMFT_REQUIRE(kind->as_string() != "no_jinja",
                  "chat templates are rendered by Python's Jinja2, but '"
                      << python << "' cannot import it (" << message << "); " << kInstallJinja);
    std::ostringstream where;
    where << "chat template " << origin_;
    if (reply.at("line").is_number()) {
      const auto line = static_cast<size_t>(reply.at("line").as_int());
      where << " line " << line << " (" << line_of(text_, line) << ")";
    }
    if (reply.at("conversation").is_number()) {
      const auto index = static_cast<size_t>(reply.at("conversation").as_int());
      where << ", rendering "
            << (index < names.size() ? names[index] : "conversation " + std::to_string(index + 1));
    }
    LLMFT_FAIL(where.str() << ": " << message
                           << "; fix the template or pass another with --chat-template FILE");
  }
  std::vector<std::string> rendered;
  for (const Json& text : reply.at("rendered").as_array()) rendered.push_back(text.as_string());
  LLMFT_REQUIRE(rendered.size() == conversations.size(),
                "chat template renderer returned " << rendered.size() << " texts for "
                                                   << conversations.size() << " conversations");
  return rendered;
}

}  // namespace llmft::io
