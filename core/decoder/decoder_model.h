// DecoderModel: a decoder-only language model as a chain of units, for any Family.
//   unit 0        embedding: token embedding (+ learned positions)
//   unit 1..L     transformer blocks (the family's)
//   unit L + 1    head: final norm; logits = norm(x) @ W^T with W the LM head, or the
//                 token embedding of unit 0 when embeddings are tied
// The loss is the mean cross-entropy of the logits against the targets, fused with its
// gradient. Kept for backward besides the blocks': the token ids, the embedding output,
// the final norm's output and statistics, and the logits (which become their own
// gradient). The embedding, the LM head and the cross-entropy are vocabulary-parallel:
// each rank holds rows vocab_start .. + vocab_rows of the vocabulary padded to
// kVocabRowMultiple rows a rank (with one rank too), its logits only for those, and the
// cross-entropy reduces its row maxima, exp-sums and target logits over the group.
// Under sequence parallelism the residual stream between units (the embedding output,
// the blocks' outputs, their gradients) holds this rank's stream rows
// (core/decoder/block.h): the embedding reduce-scatters into them, the head gathers the
// final norm's output for the LM head. With activation checkpointing a block keeps only
// its output during forward and backward recomputes the rest from the block's input,
// giving bitwise the same gradients.
#pragma once

#include <memory>
#include <vector>

#include "core/decoder/family.h"
#include "core/model.h"

namespace llmft {

class DecoderModel : public Model {
 public:
  // A rank's vocabulary rows are padded to a multiple of this, so that the LM head's
  // products have 16-byte aligned rows in every dtype, as cuBLASLt's fast kernels need:
  // on an H200, GPT-2's 50257 rows ran those products on align1 kernels and its bf16
  // step (16 x 1024) took 64.2 ms, 38.4 ms with the vocabulary padded to 50304.
  // Padding rows are zero, never looked up, and their logits are left out of the loss.
  static constexpr int64_t kVocabRowMultiple = 64;

  DecoderModel(const ModelConfig& config, std::unique_ptr<Family> family, Backend& backend,
               Allocator& allocator, const ModelOptions& options);

  const ModelConfig& config() const override { return config_; }
  void set_compute_dtype(DType dtype) override { activations_ = dtype; }
  const std::vector<UnitLayout>& units() const override { return units_; }
  std::vector<int> extra_units_read(int unit) const override;
  int grads_completed_by(int unit) const override { return unit; }

  void begin_micro_batch(const MicroBatch& batch, float loss_scale, LogitRows logit_rows) override;
  void forward_unit(int unit, const UnitTensors& units) override;
  void backward_unit(int unit, const UnitTensors& units, bool keep_activations) override;
  void end_micro_batch() override;

  void begin_decoding(int batch, int max_len) override;
  void end_decoding() override;

  double loss_sum() override;
  void reset_loss() override;
  std::vector<float> logits() override;

 private:
  int head_unit() const { return config_.n_layer + 1; }
  // Rows of this rank's logits that are real vocabulary entries (the rest are padding).
  int64_t valid_vocab_rows() const;
  // The context of a block (layer >= 0: with its KV cache when decoding) or of the head.
  // The micro-batch's token positions, (batch, seq_len) i32 (undefined between micro-batches).
  Tensor positions() const {
    return positions_.empty() ? Tensor()
                              : positions_.as(DType::i32, {shape_.batch, shape_.seq_len});
  }
  BlockContext context(int layer = -1) const;
  // A (stream rows, hidden) activation in `buffer`, and the bytes of one.
  Tensor hidden(const Buffer& buffer) const;
  size_t hidden_bytes() const;
  Tensor block_input(int layer) const;
  // The LM head's weight (V, C) among the units' parameters (or gradients).
  Tensor head_weight(const UnitTensors& units, bool grads) const;
  void embedding_forward(const UnitTensors& units);
  void embedding_backward(const UnitTensors& units, bool keep_activations);
  void head_forward(const UnitTensors& units);
  // Whether this micro-batch's forward keeps logits instead of computing the loss.
  bool logits_only() const { return logit_rows_ != LogitRows::none; }
  // Rows the LM head computes: each sequence's last with LogitRows::last, else every row.
  int64_t lm_head_rows() const;
  // The last position's row of each sequence of `rows` (batch x seq rows), into a
  // workspace in `buffer`.
  Tensor last_positions(const BlockContext& ctx, Buffer& buffer, Tensor rows) const;
  void head_backward(const UnitTensors& units, bool keep_activations);

  ModelConfig config_;
  std::unique_ptr<Family> family_;
  Backend& be_;
  Allocator& alloc_;
  int checkpointed_blocks_;  // the first ones (ModelOptions)
  bool checkpointed(int layer) const { return layer < checkpointed_blocks_; }
  TpSlice tp_;
  ReduceGroup* tp_group_;
  bool sequence_parallel_;          // ModelOptions
  bool split_rows_;                 // this micro-batch's stream is split (its rows divide by tp)
  DType activations_ = DType::f32;  // the compute dtype (core/compute_dtype.h)
  std::vector<UnitLayout> units_;
  int64_t vocab_rows_;   // rows of the (vocabulary-parallel) token embedding and LM head
  int64_t vocab_start_;  // the first of them in the whole vocabulary
  Buffer loss_sum_;

  // Per micro-batch state.
  BlockShape shape_;
  float loss_scale_ = 0.0f;
  LogitRows logit_rows_ = LogitRows::none;
  int position_ = 0;
  std::vector<Buffer> kv_caches_;  // per block, (B, max_len, W), while decoding
  int decode_batch_ = 0, decode_len_ = 0;
  Buffer tokens_, positions_, targets_, embedding_out_, stream_, logits_;
  std::vector<BlockSaved> blocks_;
  NormSaved final_norm_;
};

}  // namespace llmft
