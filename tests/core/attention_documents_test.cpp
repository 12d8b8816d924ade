// The documents of packed rows (core/attention_documents.h) against the attention mask the
// CPU kernels apply to the same positions, and their split into cuDNN calls against the
// workspace bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/attention_documents.h"

using namespace llmft;

namespace {

constexpr auto kDeterministic = AttentionWorkspaceRule::cudnn_deterministic;
constexpr auto kNondeterministic = AttentionWorkspaceRule::cudnn_nondeterministic;

// Positions of rows packed from samples of these lengths, row after row (each row's
// lengths sum to T), as io/window_layout.h writes them.
std::vector<int32_t> packed_positions(const std::vector<std::vector<int>>& rows) {
  std::vector<int32_t> positions;
  for (const auto& lengths : rows) {
    for (const int length : lengths) {
      for (int p = 0; p < length; ++p) positions.push_back(p);
    }
  }
  return positions;
}

// Whether query token q may see key token k under the documents: same document, k <= q.
bool document_mask(const std::vector<AttentionDocument>& documents, int64_t q, int64_t k) {
  for (const AttentionDocument& d : documents) {
    const bool holds_q = q >= d.first_token && q < d.first_token + d.length;
    if (holds_q) return k >= d.first_token && k <= q;
  }
  return false;
}

// The chunks document_chunks makes: in order, every document once, each within the
// budget the rows unpacked get, padded as asked, and each stopping only where the next
// document would not fit.
void check_chunks(const std::vector<AttentionDocument>& documents, AttentionWorkspaceRule rule,
                  const AttentionShape& rows, bool pad_counts) {
  const size_t budget = attention_backward_workspace_bytes(rule, rows);
  const std::vector<DocumentChunk> chunks =
      document_chunks(documents, rule, rows, budget, pad_counts);
  // The padded shape of documents [first, first + count), as the header states it.
  auto padded = [&](int64_t first, int64_t count) {
    int64_t longest = 0;
    for (int64_t d = first; d < first + count; ++d)
      longest = std::max(longest, documents[d].length);
    int64_t length = 128, padded_count = 1;
    while (length < longest) length *= 2;
    while (padded_count < count) padded_count *= 2;
    const int64_t cap = (rows.T + 127) / 128 * 128;
    return DocumentChunk{first, count, pad_counts ? padded_count : count, std::min(length, cap)};
  };
  int64_t next = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const DocumentChunk& c = chunks[i];
    CHECK(c.first == next);
    CHECK(c.count >= 1);
    next += c.count;
    const DocumentChunk expected = padded(c.first, c.count);
    CHECK(c.padded_count == expected.padded_count);
    CHECK(c.padded_length == expected.padded_length);
    CHECK(attention_workspace_bound(rule, chunk_shape(rows, c)) <= budget);
    if (i + 1 < chunks.size()) {
      CHECK(attention_workspace_bound(rule, chunk_shape(rows, padded(c.first, c.count + 1))) >
            budget);
    }
  }
  CHECK(next == static_cast<int64_t>(documents.size()));
}

}  // namespace

TEST_CASE("documents of packed rows mask attention as the positions do") {
  const int64_t B = 3, T = 12;
  // A row of three samples and padding, a row of one sample, a row of twelve one-token
  // samples' worth: 5 + 4 + 3; 12; 1 x 2 + 10.
  const std::vector<int32_t> positions = packed_positions({{5, 4, 3}, {12}, {1, 1, 10}});
  const auto documents = attention_documents(positions.data(), B, T);
  REQUIRE(documents.has_value());
  REQUIRE(documents->size() == 7);
  CHECK(documents->at(1).first_token == 5);
  CHECK(documents->at(1).length == 4);
  CHECK(documents->at(3).first_token == 12);
  CHECK(documents->at(3).length == 12);
  CHECK_FALSE(one_document_per_row(*documents, B));
  // The mask the kernels apply (core/backend.h): query t of row b sees keys
  // max(0, t - positions[b, t]) .. t of its row.
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      const int64_t q = b * T + t;
      const int64_t first = b * T + std::max<int64_t>(0, t - positions[q]);
      for (int64_t k = 0; k < B * T; ++k) {
        CAPTURE(q);
        CAPTURE(k);
        CHECK(document_mask(*documents, q, k) == (k >= first && k <= q));
      }
    }
  }
}

TEST_CASE("rows of one sample each are one document per row") {
  const int64_t B = 2, T = 8;
  std::vector<int32_t> positions = packed_positions({{8}, {8}});
  auto documents = attention_documents(positions.data(), B, T);
  REQUIRE(documents.has_value());
  CHECK(one_document_per_row(*documents, B));
  // Positions past the row's start (a sample begun before the window) still see the
  // whole row before them.
  for (int32_t& p : positions) p += 3;
  documents = attention_documents(positions.data(), B, T);
  REQUIRE(documents.has_value());
  CHECK(one_document_per_row(*documents, B));
}

TEST_CASE("positions that are not whole documents are refused") {
  const int64_t T = 6;
  // A start that moves back inside a run (the last token sees into the first sample), and
  // a negative position.
  const std::vector<int32_t> moving_back{0, 1, 2, 0, 1, 3};
  CHECK_FALSE(attention_documents(moving_back.data(), 1, T).has_value());
  const std::vector<int32_t> negative{0, 1, -1, 0, 1, 2};
  CHECK_FALSE(attention_documents(negative.data(), 1, T).has_value());
  // A start that jumps forward, but not to its own token: a key range that begins inside
  // the sample before it.
  const std::vector<int32_t> mid_start{0, 1, 2, 3, 1, 2};
  CHECK_FALSE(attention_documents(mid_start.data(), 1, T).has_value());
}

TEST_CASE("document chunks fit the workspace the unpacked rows were given") {
  // TinyLlama's heads, 8 rows of 2048 packed with samples of 100..700 tokens.
  const AttentionShape rows{DType::bf16, 8, 2048, 32, 4, 64};
  std::vector<std::vector<int>> lengths;
  uint32_t seed = 7;
  for (int b = 0; b < rows.B; ++b) {
    std::vector<int> row;
    int left = 2048;
    while (left > 0) {
      seed = seed * 1103515245u + 12345u;
      const int length = std::min(left, 100 + static_cast<int>((seed >> 16) % 600));
      row.push_back(length);
      left -= length;
    }
    lengths.push_back(row);
  }
  const std::vector<int32_t> positions = packed_positions(lengths);
  const auto documents = attention_documents(positions.data(), rows.B, rows.T);
  REQUIRE(documents.has_value());
  for (const auto rule : {kDeterministic, kNondeterministic}) {
    for (const bool pad_counts : {true, false}) {
      CAPTURE(attention_workspace_rule_name(rule));
      CAPTURE(pad_counts);
      check_chunks(*documents, rule, rows, pad_counts);
    }
  }
}

TEST_CASE("a document as long as the row always gets a call of its own") {
  // T = 1100, not a multiple of the 128 tile, with grouped queries: under either rule the
  // lone document, padded to 1152 (T rounded up to 128, not the next power of two), fits
  // the bytes one row unpacked gets.
  const AttentionShape row{DType::bf16, 1, 1100, 8, 2, 64};
  const std::vector<AttentionDocument> documents{{0, 1100}};
  for (const auto rule : {kDeterministic, kNondeterministic}) {
    CAPTURE(attention_workspace_rule_name(rule));
    const size_t budget = attention_backward_workspace_bytes(rule, row);
    const std::vector<DocumentChunk> chunks = document_chunks(documents, rule, row, budget, true);
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].padded_length == 1152);
    CHECK(attention_workspace_bound(rule, chunk_shape(row, chunks[0])) <= budget);
  }
}
