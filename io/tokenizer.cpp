#include "io/tokenizer.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/bpe_files.h"
#include "io/bpe_tokenizer.h"
#include "io/byte_tokenizer.h"
#include "io/sentencepiece_bpe.h"

namespace llmft::io {

Tokenizer::~Tokenizer() = default;

namespace {

// The BPE tokenizer of the files at `path`, of the kind their contents say.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(const std::string& path) {
  const BpeFiles files = read_bpe_files(path);
  if (files.kind == BpeFiles::Kind::sentencepiece) {
    return std::make_unique<SentencePieceBpeTokenizer>(path, files);
  }
  return std::make_unique<BpeTokenizer>(path, files);
}

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
      {"bpe", "PATH", make_bpe_tokenizer},
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
  return text +
         " (PATH: a Hugging Face tokenizer.json of a GPT-2 or Llama 3 byte-level BPE or a "
         "Llama 2 / Mistral SentencePiece BPE, a GPT-2 vocab.json with merges.txt beside "
         "it, or a directory holding either); a plain PATH (one with a '/', ending in "
         ".json, or a file or directory that exists) means 'bpe:PATH'";
}

// A spec read as 'bpe:PATH', so that `--tokenizer path/to/tokenizer.json` and
// `--tokenizer model_dir` work: one with a '/', ending in .json, or naming a file or
// directory that exists (the known names are matched first).
bool is_plain_path(const std::string& spec) {
  const std::string json = ".json";
  std::error_code error;
  return spec.find('/') != std::string::npos ||
         (spec.size() > json.size() &&
          spec.compare(spec.size() - json.size(), json.size(), json) == 0) ||
         (!spec.empty() && std::filesystem::exists(spec, error));
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
    LLMFT_REQUIRE(entry.argument_help == nullptr || !argument.empty(),
                  "tokenizer '" << name << "' needs an argument: write '" << name << ":"
                                << entry.argument_help << "'");
    return entry.make(argument);
  }
  if (is_plain_path(spec)) return make_tokenizer("bpe:" + spec);
  LLMFT_FAIL("unknown tokenizer '" << spec << "': known tokenizers are "
                                   << describe_known_tokenizers());
}

std::string tokenizer_directory(const std::string& spec) {
  const std::string prefix = "bpe:";
  const bool bpe = spec.rfind(prefix, 0) == 0;
  if (!bpe && !is_plain_path(spec)) return "";
  const std::filesystem::path path = bpe ? spec.substr(prefix.size()) : spec;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return path.string();
  return path.has_parent_path() ? path.parent_path().string() : ".";
}

}  // namespace llmft::io
