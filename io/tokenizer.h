// Tokenizer: turns text into token ids and back. Implementations are immutable after
// construction, so one instance may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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
  // The end-of-text token that ends each document: GPT-2's "<|endoftext|>", Llama 2's
  // "</s>", Llama 3's "<|end_of_text|>", or the eos_token of tokenizer_config.json.
  virtual int32_t eot_token() const = 0;
  // The token the model's tokenizer puts before each text (Llama's BOS), if it adds one.
  virtual std::optional<int32_t> bos_token() const { return std::nullopt; }
  // Whether `token` is one the tokenizer cuts out of text verbatim (tokenizer.json's
  // added_tokens: "<|im_end|>", "</s>", ...), not one of the model's BPE pieces. Here:
  // the end-of-text and BOS tokens.
  virtual bool is_added_token(int32_t token) const {
    return token == eot_token() || token == bos_token();
  }

  // The tokens of `text` alone, as Hugging Face `tokenizers` encodes it with
  // add_special_tokens=False.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // encode(text), with the byte of `text` where each token begins in `starts` (cleared
  // first): token i stands for bytes [starts[i], starts[i + 1]) of the text, the last one
  // up to its end. A token for no byte of the text (the space mark SentencePiece puts
  // before a piece, the space of ByteLevel's add_prefix_space) starts where the next
  // byte of the text is.
  virtual std::vector<int32_t> encode_with_offsets(std::string_view text,
                                                   std::vector<size_t>& starts) const = 0;
  // encode(text) with the special tokens the model's tokenizer adds around it (BOS first;
  // EOS last where tokenizer_config.json sets add_eos_token), as `tokenizers` encodes it
  // with add_special_tokens=True.
  virtual std::vector<int32_t> encode_with_special_tokens(std::string_view text) const {
    return encode(text);
  }
  // REQUIRES: every token is in [0, vocab_size()).
  virtual std::string decode(const std::vector<int32_t>& tokens) const = 0;
};

// Builds the tokenizer named by `spec`, which is "NAME" or, for tokenizers that need
// one (say a directory of vocabulary files), "NAME:ARGUMENT". Known now: "byte" and
// "bpe:PATH", which picks the kind of BPE (byte-level or SentencePiece-style) from the
// contents of the files at PATH; a plain path means "bpe:PATH".
// Throws llmft::Error listing the known tokenizers when `spec` names none of them.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec);

// The directory holding the files of the tokenizer `spec` names (make_tokenizer's forms):
// PATH when it is a directory, else the directory of the file PATH; "" for a tokenizer
// without files ("byte").
std::string tokenizer_directory(const std::string& spec);

}  // namespace llmft::io
