#include "io/tokenizer.h"

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/byte_tokenizer.h"

namespace llmft::io {

Tokenizer::~Tokenizer() = default;

namespace {

struct TokenizerEntry {
  const char* name;
  // What the "NAME:ARGUMENT" form expects as ARGUMENT, or nullptr when it takes none.
  const char* argument_help;
  // Receives ARGUMENT ("" when the spec has no ':').
  std::function<std::unique_ptr<Tokenizer>(const std::string& argument)> make;
};

// To add a tokenizer, add a row here.
const std::vector<TokenizerEntry>& known_tokenizers() {
  static const std::vector<TokenizerEntry> entries = {
      {"byte", nullptr, [](const std::string&) { return std::make_unique<ByteTokenizer>(); }},
  };
  return entries;
}

std::string describe_known_tokenizers() {
  std::string text;
  for (const TokenizerEntry& entry : known_tokenizers()) {
    if (!text.empty()) text += ", ";
    text += "'";
    text += entry.name;
    if (entry.argument_help != nullptr) text += std::string(":") + entry.argument_help;
    text += "'";
  }
  return text;
}

}  // namespace

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  for (const TokenizerEntry& entry : known_tokenizers()) {
    if (entry.name != name) continue;
    LLMFT_REQUIRE(entry.argument_help != nullptr || colon == std::string::npos,
                  "tokenizer '" << name << "' takes no argument, but got '" << spec
                                << "': write just '" << name << "'");
    return entry.make(argument);
  }
  LLMFT_FAIL("unknown tokenizer '" << spec << "': known tokenizers are "
                                   << describe_known_tokenizers());
}

}  // namespace llmft::io
