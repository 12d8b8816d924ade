#include "io/bpe_merges.h"

#include <algorithm>

namespace llmft::io {

void BpeMerges::add(int32_t left, int32_t right, int32_t merged, int32_t rank) {
  merges_[key(left, right)] = Merge{rank, merged};
}

void BpeMerges::merge_word(const std::vector<int32_t>& initial, Workspace& workspace,
                           std::vector<int32_t>& tokens, std::vector<size_t>* first_symbols) const {
  using Candidate = Workspace::Candidate;
  const auto n = static_cast<int32_t>(initial.size());
  if (n <= 1) {
    tokens.insert(tokens.end(), initial.begin(), initial.end());
    if (first_symbols != nullptr && n == 1) first_symbols->push_back(0);
    return;
  }
  std::vector<Workspace::Symbol>& symbols = workspace.symbols;
  std::vector<Candidate>& heap = workspace.heap;
  symbols.resize(n);
  for (int32_t i = 0; i < n; ++i) symbols[i] = {initial[i], i - 1, i + 1 < n ? i + 1 : -1};
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  // The pair that starts at `pos`, if it merges.
  const auto candidate_at = [&](int32_t pos, bool keep_heap) {
    const int32_t left = symbols[pos].token, right = symbols[symbols[pos].next].token;
    const auto found = merges_.find(key(left, right));
    if (found == merges_.end()) return;
    heap.push_back({found->second.rank, pos, left, right, found->second.merged});
    if (keep_heap) std::push_heap(heap.begin(), heap.end(), later);
  };
  heap.clear();
  for (int32_t pos = 0; pos + 1 < n; ++pos) candidate_at(pos, false);
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate top = heap.back();
    heap.pop_back();
    Workspace::Symbol& left = symbols[top.pos];
    // Skip pairs that earlier merges have changed; a symbol merged into its left
    // neighbour is unlinked, so no live symbol points at it.
    if (left.token != top.left || left.next < 0) continue;
    Workspace::Symbol& right = symbols[left.next];
    if (right.token != top.right) continue;
    left.token = top.merged;
    left.next = right.next;
    right.token = -1;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) candidate_at(left.prev, true);
    if (left.next >= 0) candidate_at(top.pos, true);
  }
  for (int32_t pos = 0; pos >= 0; pos = symbols[pos].next) {
    tokens.push_back(symbols[pos].token);
    if (first_symbols != nullptr) first_symbols->push_back(static_cast<size_t>(pos));
  }
}

}  // namespace llmft::io
