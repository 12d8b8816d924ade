// Family: what one model family (GPT-2, LLaMA) contributes to the decoder chain
// embedding -> blocks -> final norm -> LM head that DecoderModel runs.
//
// Layout conventions DecoderModel relies on:
//   embedding unit: param 0 is the token embedding (V, C); an optional param 1 is a
//                   learned position embedding (P, C)
//   head unit:      param 0 the final norm's weight, param 1 its bias (LayerNorm only),
//                   and, when embeddings are untied, the LM head (V, C) last
// Layouts are of one tensor-parallel slice (TpSlice{} is the whole model): the token
// embedding and LM head split by vocabulary rows, blocks as parallel_linear.h says.
#pragma once

#include "core/decoder/block.h"
#include "core/decoder/norm.h"
#include "core/unit_layout.h"

#include <vector>

namespace llmft {

class Family {
 public:
  virtual ~Family() = default;
  virtual NormKind norm_kind() const = 0;
  // Vocabulary-parallel parameters' rows are padded to a multiple of vocab_row_multiple
  // (vocab_split).
  virtual UnitLayout embedding_layout(const ModelConfig& config, TpSlice tp,
                                      int64_t vocab_row_multiple) const = 0;
  virtual UnitLayout block_layout(const ModelConfig& config, int layer, TpSlice tp) const = 0;
  virtual UnitLayout head_layout(const ModelConfig& config, TpSlice tp,
                                 int64_t vocab_row_multiple) const = 0;
  // x(N, C) is the block input; fills `saved` (saved.out is the block output).
  virtual void block_forward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                             Tensor x, BlockSaved& saved) const = 0;
  // On entry `stream` holds d(loss)/d(out); on return d(loss)/d(x). Parameter gradients
  // are accumulated into `grads`. REQUIRES: saved.internals (recomputed if checkpointed).
  virtual void block_backward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                              Tensor grads, Tensor x, const BlockSaved& saved,
                              Tensor stream) const = 0;
};

// The family's units for a config: embedding, blocks, head.
std::vector<UnitLayout> unit_layouts(const Family& family, const ModelConfig& config, TpSlice tp,
                                     int64_t vocab_row_multiple);

}  // namespace llmft
