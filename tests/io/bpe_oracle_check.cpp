// Checks llmft's tokenizer against ids that Hugging Face `tokenizers` wrote (see
// hf_tokenizer_oracle.py and hf_llama_tokenizer_oracle.py): encodes TEXT_FILE with
// make_tokenizer(TOKENIZER_SPEC), compares token for token with EXPECTED_JSON's "ids"
// (and, where it has them, encode_with_special_tokens with "ids_with_special_tokens"),
// and checks decoding: equal to its "decoded" where it has one (`tokenizers`' decode,
// end-of-text as "\n"), else the text back (with "<|endoftext|>" as "\n", how llmft
// renders end-of-text). Prints the first mismatch with the tokens and text around it;
// exits 1 on any.
//
// usage: bpe_oracle_check TOKENIZER_SPEC TEXT_FILE EXPECTED_JSON
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/json.h"
#include "io/tokenizer.h"
#include "launch/guarded_main.h"

using namespace llmft;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "[id id ...]" for tokens[begin, end) and the text they decode to.
std::string describe(const io::Tokenizer& tok, const std::vector<int32_t>& tokens, size_t begin,
                     size_t end) {
  end = std::min(end, tokens.size());
  begin = std::min(begin, end);
  std::ostringstream os;
  os << "[";
  for (size_t i = begin; i < end; ++i) os << (i > begin ? " " : "") << tokens[i];
  const std::vector<int32_t> part(tokens.begin() + begin, tokens.begin() + end);
  os << "] = " << io::Json::quote(tok.decode(part));
  return os.str();
}

std::vector<int32_t> ids_of(const io::Json& list) {
  std::vector<int32_t> ids;
  for (const io::Json& id : list.as_array()) ids.push_back(static_cast<int32_t>(id.as_int()));
  return ids;
}

// Prints the first difference of `expected` and `actual`; true if there is none.
bool same_tokens(const io::Tokenizer& tok, const std::vector<int32_t>& expected,
                 const std::vector<int32_t>& actual, const std::string& what) {
  const auto mismatch =
      std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
  if (mismatch.first == expected.end() && mismatch.second == actual.end()) return true;
  const size_t at = static_cast<size_t>(mismatch.first - expected.begin());
  const size_t from = at >= 8 ? at - 8 : 0;
  std::printf("MISMATCH %s at token %zu of %zu (llmft made %zu tokens)\n", what.c_str(), at,
              expected.size(), actual.size());
  std::printf("  tokenizers: %s\n", describe(tok, expected, from, at + 8).c_str());
  std::printf("  llmft:      %s\n", describe(tok, actual, from, at + 8).c_str());
  return false;
}

int run(int argc, char** argv) {
  LLMFT_REQUIRE(argc == 4, "usage: bpe_oracle_check TOKENIZER_SPEC TEXT_FILE EXPECTED_JSON");
  const std::string spec = argv[1], text_file = argv[2], expected_file = argv[3];
  const auto tok = io::make_tokenizer(spec);
  const std::string text = read_file(text_file);
  const io::Json expected_json = io::Json::parse(read_file(expected_file));
  const std::vector<int32_t> expected = ids_of(expected_json.at("ids"));

  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> actual = tok->encode(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string what = spec + " on " + text_file;
  if (!same_tokens(*tok, expected, actual, what)) return 1;
  if (const io::Json* with_special = expected_json.find("ids_with_special_tokens")) {
    if (!same_tokens(*tok, ids_of(*with_special), tok->encode_with_special_tokens(text),
                     what + " with special tokens")) {
      return 1;
    }
  }
  std::string round_trip = text;
  const std::string end_of_text = "<|endoftext|>";
  for (size_t at = 0; (at = round_trip.find(end_of_text, at)) != std::string::npos; ++at) {
    round_trip.replace(at, end_of_text.size(), "\n");
  }
  if (const io::Json* decoded = expected_json.find("decoded")) round_trip = decoded->as_string();
  const std::string decoded = tok->decode(actual);
  if (decoded != round_trip) {
    const auto differ =
        std::mismatch(round_trip.begin(), round_trip.end(), decoded.begin(), decoded.end());
    const size_t at = static_cast<size_t>(differ.first - round_trip.begin());
    std::printf("MISMATCH %s: decode(encode(text)) differs from the expected text at byte %zu\n",
                what.c_str(), at);
    return 1;
  }
  std::printf(
      "ok: %zu tokens of %s (%zu bytes) equal tokenizers %s with %s; decode gives the "
      "expected text; encode ran at %.1f MB/s\n",
      actual.size(), text_file.c_str(), text.size(),
      expected_json.at("tokenizers_version").as_string().c_str(), spec.c_str(),
      text.size() / seconds / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("bpe_oracle_check", run, argc, argv);
}
