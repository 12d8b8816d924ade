// Tokenizer: turns text into token ids and back. Implementations are immutable after
// construction, so one instance may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmft::io {

class Tokenizer {
 public:
  virtual ~Tokenizer();

  // Short name as accepted by make_tokenizer, e.g. "byte".
  virtual std::string name() const = 0;
  // Token ids are in [0, vocab_size()).
  virtual int vocab_size() const = 0;
  // The end-of-text token that separates documents.
  virtual int32_t eot_token() const = 0;

  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // REQUIRES: every token is in [0, vocab_size()).
  virtual std::string decode(const std::vector<int32_t>& tokens) const = 0;
};

// Builds the tokenizer named by `spec`, which is "NAME" or, for tokenizers that need
// one (say a directory of vocabulary files), "NAME:ARGUMENT". Known now: "byte".
// Throws llmft::Error listing the known tokenizers when `spec` names none of them.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec);

}  // namespace llmft::io
