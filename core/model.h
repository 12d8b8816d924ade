// Model: the contract between a model family and the Engine that drives it.
//
// A model is a chain of units (embedding, blocks, head). The Engine owns each unit's
// flat parameter and gradient buffers and calls, per micro-batch:
//   begin_micro_batch -> forward_unit(0..U-1) -> backward_unit(U-1..0) -> end_micro_batch
// so that strategies can act between units (gather before use, reduce a gradient as
// soon as its unit's backward is done). A unit's gradient is complete after its
// backward_unit, except where grads_completed_by() says another unit finishes it (tied
// embeddings). Model code knows nothing about data parallelism, ZeRO or LOMO; under
// tensor parallelism its units are this rank's slices and its layers reduce over the
// tensor-parallel group themselves.
//
// Activations kept for backward are taken from the Allocator under `activations` in
// forward_unit and released in backward_unit; temporaries are `workspace`.
//
// Thread-safety: one Model per rank, used from one thread.
#pragma once

#include <limits>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/micro_batch.h"
#include "core/model_config.h"
#include "core/reduce_group.h"
#include "core/tp_slice.h"
#include "core/unit_layout.h"

namespace llmft {

struct ModelOptions {
  static constexpr int kAllBlocks = std::numeric_limits<int>::max();

  // checkpointing: every block or none.
  explicit ModelOptions(bool checkpointing = false, TpSlice slice = {},
                        ReduceGroup* group = nullptr)
      : checkpointed_blocks(checkpointing ? kAllBlocks : 0), tp(slice), tp_group(group) {}

  // Activation checkpointing of the first `checkpointed_blocks` blocks, counted from the
  // embedding (kAllBlocks: all): each keeps only its input in forward and recomputes the
  // rest in backward. The first ones are backpropagated last, when the later blocks have
  // freed their activations, so their recomputation never stacks on them: for any count,
  // this choice has the lowest peak.
  int checkpointed_blocks;
  TpSlice tp;             // this rank's tensor-parallel slice (TpSlice{}: all)
  ReduceGroup* tp_group;  // its tensor-parallel group when tp.size > 1
  // Megatron's sequence parallelism, with tp.size > 1: the residual stream (block inputs
  // and outputs, norms, residual adds) holds 1/tp of a micro-batch's rows on each rank;
  // each tensor-parallel all-reduce becomes a reduce-scatter into the stream and an
  // all-gather out of it (core/decoder/block.h). A micro-batch whose rows (batch x seq)
  // tp does not divide (a short last evaluation batch) runs without it.
  bool sequence_parallel = false;
};

// Which logits a micro-batch's forward keeps for Model::logits().
enum class LogitRows {
  none,   // a training or evaluation forward: the loss, no logits
  every,  // every position's
  last,   // each sequence's last position's: what generation samples from, without the
          // LM head product and the (seq x vocab) logits of every other position
};

// Flat per-unit tensors, indexed by unit. Entries may be undefined while not needed.
struct UnitTensors {
  std::vector<Tensor> params;
  std::vector<Tensor> grads;
};

class Model {
 public:
  virtual ~Model() = default;

  virtual const ModelConfig& config() const = 0;
  virtual const std::vector<UnitLayout>& units() const = 0;
  // The dtype activations, their gradients and the logits are kept and computed in: the
  // backend's compute dtype for the run's stored dtype (core/compute_dtype.h). The Engine
  // sets it before the first micro-batch; f32 until then.
  virtual void set_compute_dtype(DType dtype) = 0;
  // Units whose parameters forward_unit(u) / backward_unit(u) read besides u.
  virtual std::vector<int> extra_units_read(int unit) const = 0;
  // The unit whose backward completes unit u's gradient (u itself unless tied).
  virtual int grads_completed_by(int unit) const = 0;

  // Uploads the tokens. Gradients of this micro-batch are scaled by loss_scale (e.g.
  // 1 / target tokens of the whole step, so the step's gradient is the mean's).
  // With logit rows other than none, the head keeps those logits for logits() instead of
  // computing the loss (and no backward may follow).
  virtual void begin_micro_batch(const MicroBatch& batch, float loss_scale,
                                 LogitRows logit_rows) = 0;
  virtual void forward_unit(int unit, const UnitTensors& units) = 0;
  // With keep_activations, the unit keeps what its backward read, so that another
  // backward pass can follow (LOMO's norm pass before its update pass); checkpointed
  // blocks keep only their output and recompute again.
  virtual void backward_unit(int unit, const UnitTensors& units, bool keep_activations) = 0;
  // Releases everything the micro-batch holds.
  virtual void end_micro_batch() = 0;

  // Incremental decoding (inference): keeps every block's keys and values for up to
  // max_len positions of `batch` rows, so that each logits-only forward processes only
  // new tokens, given with MicroBatch::position set to the number already processed.
  virtual void begin_decoding(int batch, int max_len) = 0;
  virtual void end_decoding() = 0;

  // Sum of per-token losses since reset_loss() (waits for the device).
  virtual double loss_sum() = 0;
  virtual void reset_loss() = 0;
  // The logits begin_micro_batch asked for, host copy: (batch, seq, vocab) for every
  // position, (batch, vocab) for the last.
  virtual std::vector<float> logits() = 0;
};

}  // namespace llmft
