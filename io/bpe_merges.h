// BpeMerges: the merge table of a BPE model and the loop that applies it to one word, as
// Hugging Face `tokenizers` does: the pair of lowest rank first, the leftmost among
// equals. Shared by the byte-level tokenizer (GPT-2, Llama 3) and the SentencePiece-style
// one (Llama 2, Mistral), which differ only in how a word becomes its first symbols.
// Immutable once built; merge_word may run on many threads, each with its own Workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace llmft::io {

class BpeMerges {
 public:
  // Buffers of one encode() call, reused from word to word.
  struct Workspace {
    struct Symbol {
      int32_t token;
      int32_t prev;  // -1 at the start of the word
      int32_t next;  // -1 at the end of the word
    };
    // A pair that may merge: the symbol at `pos` (token `left`) and the next one (`right`).
    struct Candidate {
      int32_t rank;
      int32_t pos;
      int32_t left, right, merged;
    };
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;  // min-heap by (rank, pos)
  };

  // The rule of rank `rank`: `left` followed by `right` becomes `merged`. A pair added
  // twice keeps the later rank, as in `tokenizers`.
  void add(int32_t left, int32_t right, int32_t merged, int32_t rank);

  // Merges the word whose first symbols are `symbols` and appends the resulting tokens to
  // `tokens`, and, when `first_symbols` is not null, the index in `symbols` of each one's
  // first symbol to it. O(n log n) for n symbols.
  void merge_word(const std::vector<int32_t>& symbols, Workspace& workspace,
                  std::vector<int32_t>& tokens, std::vector<size_t>* first_symbols = nullptr) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  static uint64_t key(int32_t left, int32_t right) {
    return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
  }

  std::unordered_map<uint64_t, Merge> merges_;  // key(left, right) -> rule
};

}  // namespace llmft::io
