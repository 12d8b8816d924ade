#include "io/byte_tokenizer.h"

#include "core/error.h"

namespace llmft::io {

std::vector<int32_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size());
  for (char c : text) tokens.push_back(static_cast<unsigned char>(c));
  return tokens;
}

std::vector<int32_t> ByteTokenizer::encode_with_offsets(std::string_view text,
                                                        std::vector<size_t>& starts) const {
  starts.resize(text.size());
  for (size_t i = 0; i < text.size(); ++i) starts[i] = i;
  return encode(text);
}

std::string ByteTokenizer::decode(const std::vector<int32_t>& tokens) const {
  std::string text;
  text.reserve(tokens.size());
  for (int32_t token : tokens) {
    LLMFT_REQUIRE(token >= 0 && token <= kEndOfText, "byte tokenizer cannot decode token "
                                                         << token << ": its ids are 0.."
                                                         << kEndOfText);
    text += token == kEndOfText ? '\n' : static_cast<char>(token);
  }
  return text;
}

}  // namespace llmft::io
