// Gpt2Model: the GPT-2 family as a chain of units.
//   unit 0        embedding: wte (V, C), wpe (P, C)     out = wte[tok] + wpe[t]
//   unit 1..L     transformer blocks (gpt2_block.h)
//   unit L + 1    head: final LayerNorm; logits = ln_f(x) @ wte^T (tied to unit 0)
// The loss is the cross-entropy of the logits against the targets, fused with its
// gradient. Kept for backward besides the blocks': the token ids, the embedding output,
// ln_f's output, mean and rstd, and the logits (which become their own gradient).
#pragma once

#include <vector>

#include "core/gpt2/gpt2_block.h"
#include "core/model.h"

namespace llmft {

class Gpt2Model : public Model {
 public:
  Gpt2Model(const ModelConfig& config, Backend& backend, Allocator& allocator);

  const ModelConfig& config() const override { return config_; }
  const std::vector<UnitLayout>& units() const override { return units_; }
  std::vector<int> extra_units_read(int unit) const override;
  int grads_completed_by(int unit) const override;

  void begin_micro_batch(const MicroBatch& batch, float loss_scale, bool want_logits) override;
  void forward_unit(int unit, const UnitTensors& units) override;
  void backward_unit(int unit, const UnitTensors& units) override;
  void end_micro_batch() override;

  double loss_sum() override;
  void reset_loss() override;
  std::vector<float> last_logits() override;

 private:
  int head_unit() const { return config_.n_layer + 1; }
  Tensor block_input(int layer) const;
  void head_forward(const UnitTensors& units);
  void head_backward(const UnitTensors& units);

  ModelConfig config_;
  Backend& be_;
  Allocator& alloc_;
  std::vector<UnitLayout> units_;
  Buffer loss_sum_;

  // Per micro-batch state.
  BlockShape shape_{0, 0};
  float loss_scale_ = 0.0f;
  bool want_logits_ = false;
  Buffer tokens_, targets_, embedding_out_, stream_;
  std::vector<Gpt2BlockSaved> blocks_;
  Buffer lnf_, lnf_mean_, lnf_rstd_, logits_;
};

}  // namespace llmft
