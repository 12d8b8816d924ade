// StreamingDecoder: the text of tokens that arrive one at a time (`llmft generate`), as
// the tokenizer decodes the whole sequence, handed out as soon as it is final. Decoding
// token by token would go wrong where a decoder looks at neighbours (SentencePiece drops
// the first token's leading space, joins "<0xNN>" byte tokens into characters) or where a
// character's UTF-8 bytes span tokens; so this decodes the context and the new tokens
// together and holds back text that ends in an incomplete UTF-8 sequence or in U+FFFD
// (what `tokenizers` shows for bytes that do not form a character yet).
// Not thread-safe; one per stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/tokenizer.h"

namespace llmft::io {

class StreamingDecoder {
 public:
  // `context`: the tokens before the stream (the prompt's), whose text is not handed out.
  StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context);

  // Adds `token`; returns the text that is now final and was not returned before.
  std::string push(int32_t token);
  // The text held back so far, at the end of the stream.
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  std::vector<int32_t> tokens_;
  size_t handed_out_;  // bytes of the decoded text already returned (or the context's)
};

}  // namespace llmft::io
