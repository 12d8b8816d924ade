#include "core/attention_documents.h"

#include <algorithm>

namespace llmft {

namespace {

int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// The least power of two >= n. REQUIRES: n >= 1.
int64_t power_of_two_from(int64_t n) {
  int64_t power = 1;
  while (power < n) power *= 2;
  return power;
}

int64_t padded_length(int64_t longest, int64_t T) {
  return std::min(std::max(power_of_two_from(longest), kSequenceTile), round_up(T, kSequenceTile));
}

}  // namespace

std::optional<std::vector<AttentionDocument>> attention_documents(const int32_t* positions,
                                                                  int64_t B, int64_t T) {
  std::vector<AttentionDocument> documents;
  for (int64_t b = 0; b < B; ++b) {
    int64_t start = 0;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t position = positions[b * T + t];
      if (position < 0) return std::nullopt;
      const int64_t sees = std::max<int64_t>(0, t - position);
      if (t == 0 || sees == t) {
        if (t > 0) documents.push_back({b * T + start, t - start});
        start = t;
      } else if (sees != start) {
        return std::nullopt;
      }
    }
    if (T > 0) documents.push_back({b * T + start, T - start});
  }
  return documents;
}

bool one_document_per_row(const std::vector<AttentionDocument>& documents, int64_t B) {
  return static_cast<int64_t>(documents.size()) == B;
}

AttentionShape chunk_shape(const AttentionShape& rows, const DocumentChunk& chunk) {
  AttentionShape shape = rows;
  shape.B = chunk.padded_count;
  shape.T = chunk.padded_length;
  return shape;
}

std::vector<DocumentChunk> document_chunks(const std::vector<AttentionDocument>& documents,
                                           AttentionWorkspaceRule rule, const AttentionShape& rows,
                                           size_t budget, bool pad_counts) {
  std::vector<DocumentChunk> chunks;
  const auto total = static_cast<int64_t>(documents.size());
  int64_t first = 0;
  while (first < total) {
    DocumentChunk chunk{first, 1, 1, padded_length(documents[first].length, rows.T)};
    int64_t longest = documents[first].length;
    for (int64_t next = first + 1; next < total; ++next) {
      longest = std::max(longest, documents[next].length);
      const int64_t count = next - first + 1;
      const DocumentChunk wider{first, count, pad_counts ? power_of_two_from(count) : count,
                                padded_length(longest, rows.T)};
      if (attention_workspace_bound(rule, chunk_shape(rows, wider)) > budget) break;
      chunk = wider;
    }
    chunks.push_back(chunk);
    first += chunk.count;
  }
  return chunks;
}

}  // namespace llmft
