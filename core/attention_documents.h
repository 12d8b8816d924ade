// AttentionDocuments: the documents of packed training rows, as cuDNN's ragged ("THD")
// attention takes them (core/cuda/cudnn_attention.h), and how a batch of them is split
// into calls whose backward workspace stays within the bound the caller allocated.
//
// In the training layout query t of a row sees the keys from max(0, t - positions[b, t])
// up to itself (core/backend.h). The rows hold whole documents when that start is, for
// every token, either its predecessor's start or the token itself: each run of tokens
// sharing a start is then a document, attending causally within itself, which is what
// cuDNN's padding mask over ragged sequences computes. The padding after a window's last
// sample is a document of its own (io/window_layout.h).
//
// A call's tensors are (documents, heads, length, head size) with each document's tokens
// found through ragged offsets. So that a run builds few cuDNN graphs, a call's length is
// rounded up to a power of two from 128, at most T rounded up to 128, and where cuDNN
// takes empty sequences (9.25 on) its document count to a power of two too, the extra
// documents empty. cuDNN sizes the backward workspace by those padded dimensions, so calls
// take consecutive documents while the rule's bound for the padded call
// (attention_workspace_bound) fits the budget: the bytes the caller allocated for the same
// rows unpacked, which always hold one document (the bound pads T the same way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/attention_workspace.h"

namespace llmft {

struct AttentionDocument {
  int64_t first_token = 0;  // in the rows' row-major (B T) token order
  int64_t length = 0;
};

// The documents of (B, T) rows with these positions, in token order; nullopt when the
// positions do not describe whole documents (a start after its token, or a start that
// moves back or jumps forward inside a run).
std::optional<std::vector<AttentionDocument>> attention_documents(const int32_t* positions,
                                                                  int64_t B, int64_t T);

// Whether every row is one document (what unpacked training rows are).
bool one_document_per_row(const std::vector<AttentionDocument>& documents, int64_t B);

// Consecutive documents [first, first + count) in one call of padded_count documents of
// padded_length tokens.
struct DocumentChunk {
  int64_t first = 0, count = 0;
  int64_t padded_count = 0, padded_length = 0;
};

// The call shape of a chunk: `rows` with the chunk's padded count and length.
AttentionShape chunk_shape(const AttentionShape& rows, const DocumentChunk& chunk);

// Cuts `documents` of `rows` (their unpacked shape) into calls, in order, each as long as
// the rule's bound for its padded shape fits `budget` bytes; a chunk always takes at least
// one document. pad_counts: round each call's document count up to a power of two (else
// padded_count == count). REQUIRES: every document's length is within 1 .. rows.T.
std::vector<DocumentChunk> document_chunks(const std::vector<AttentionDocument>& documents,
                                           AttentionWorkspaceRule rule, const AttentionShape& rows,
                                           size_t budget, bool pad_counts);

}  // namespace llmft
