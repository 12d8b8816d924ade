// Engine: runs training steps of a Model on one rank. It owns every unit's parameter
// buffer (params, in the stored dtype), the optimizer, the learning-rate schedule,
// gradient clipping and loss scaling, and sequences units so that a parallel strategy
// can act between them (docs/ARCHITECTURE.md, "The life of a training step").
//
// Two kinds of step:
//  - accumulate (sgd, adamw): every unit has a stored gradient (grads) summed over the
//    micro-batches, in f32 or in the weights' dtype (OptimizerConfig::grad_accum_dtype,
//    optim/grad_accumulation.h); bf16/fp16 weights have f32 master copies (master_params)
//    that the optimizer updates after backward.
//  - fused (lomo, adalomo): no stored gradients and no master copies; each unit's
//    gradient exists only from its backward to its update, which happens at once in the
//    stored dtype. Clipping needs the global norm before the first update, and fp16 must
//    see an overflow before any weight changes, so then backward runs twice over the
//    same activations: a norm pass, then the update pass. One micro-batch per step.
//
// Data parallelism (a data-parallel Communicator): every rank runs its own part of the
// global batch; the loss is the mean over the global batch's targets. ZeRO stages
// (parallel/shard.h cuts units into per-rank shards):
//  0 (DDP): everything replicated; each unit's gradient is all-reduced as soon as the
//    last micro-batch completes it, non-blocking, overlapped with earlier units' backward.
//  1: optimizer state (and f32 master weights) sharded: after backward each unit's
//    gradient is reduce-scattered, each rank updates its shard, weights are all-gathered.
//  2: gradients sharded too: each unit's gradient is reduce-scattered into this rank's
//    shard as soon as its backward completes it, and the full-size buffer released.
//  3: weights sharded too: each unit is all-gathered just before its forward and again
//    before its backward (the next unit's gather is started while the current unit
//    computes), and freed after use.
// Fused optimizers reduce each unit's gradient before using it (in the norm pass too):
// LOMO all-reduces it (stages 0-1) or reduce-scatters it and updates its shard (2-3);
// AdaLomo's row and column statistics need the whole unit, so it always all-reduces and
// updates whole units (gathering the weights first with ZeRO-3).
//
// Optimizer offload (EngineOptions::offload, parallel/optimizer_offload.h): SGD and AdamW
// keep their gradient sums, f32 master weights and state in host memory and update there;
// the device keeps the stored weights and, as under ZeRO-2, each unit's gradient only from
// its backward until it is reduced (all-reduced at stage 0, reduce-scattered from stage 1)
// and copied out, every micro-batch. Without clipping or loss scaling nothing waits for the
// global norm, and the last micro-batch's backward updates each unit as its gradient
// lands; otherwise the updates follow backward as usual.
//
// Tensor parallelism (a tensor-parallel Communicator): the model's units are this rank's
// slices and its layers do their own reductions; the Engine initialises each slice from
// the whole model's values (core/tp_slice.h), and sums the gradient norm over the group,
// counting replicated parameters (norms, some biases) on tensor-parallel rank 0 only.
//
// Thread-safety: one Engine per rank, used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/micro_batch.h"
#include "core/model.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "parallel/optimizer_offload.h"
#include "parallel/working_copies.h"

namespace llmft {

struct EngineOptions {
  DType dtype = DType::f32;  // stored dtype of weights and gradients
  OptimizerConfig optimizer;
  LrSchedule schedule;
  float clip_grad = 0.0f;      // global-norm clipping; <= 0 disables
  LossScaleConfig loss_scale;  // enabled only makes sense with fp16
  uint64_t seed = 1234;        // initial weights
  bool initialize = true;      // false: leave the weights unset (a dry run on a counting device)
  bool trainable = true;       // false: parameters only (no gradients, no optimizer state)
  Communicator* data_parallel = nullptr;  // the data-parallel group; null: one rank
  int zero_stage = 0;                     // 0 (DDP) .. 3
  // The tensor-parallel group the model's units are sliced over; null: none. ZeRO shards
  // within the data-parallel group, each rank its own slice.
  Communicator* tensor_parallel = nullptr;
  // Set (kernels and allocator): --offload-optimizer, the optimizer in this host pool.
  HostPool offload;
};

struct StepStats {
  double loss = 0.0;       // mean over the step's target tokens
  double grad_norm = 0.0;  // global L2 norm before clipping (inf/NaN on overflow)
  float lr = 0.0f;
  float loss_scale = 1.0f;  // the scale this step's gradients carried
  bool skipped = false;     // the gradients overflowed and no weight changed
  int64_t target_tokens = 0;
  // Time spent waiting for DDP's gradient all-reduces after backward: the part of their
  // communication that compute did not hide.
  double exposed_comm_seconds = 0.0;
};

class Engine {
 public:
  // Allocates and initialises the parameters (seeded), gradients and optimizer state.
  Engine(Model& model, Backend& backend, Allocator& allocator, const EngineOptions& options);

  // One optimizer step over the micro-batches (gradient accumulation).
  // `step` is 1-based and drives the learning-rate schedule.
  StepStats train_step(const std::vector<MicroBatch>& micro_batches, int step);
  // Mean loss over the batches' target tokens, without touching gradients; the
  // data-parallel ranks share the batches and the result is the same on any number of them.
  // Collective over the data-parallel group (same batches on every rank).
  double evaluate(const std::vector<MicroBatch>& batches);
  // The logits of one batch on the host: (batch, seq, vocab) for every position,
  // (batch, vocab) for each sequence's last.
  std::vector<float> logits(const MicroBatch& batch, LogitRows rows = LogitRows::every);

  Model& model() { return model_; }
  const Model& model() const { return model_; }
  float loss_scale() const { return scaler_.scale(); }
  // State from outside a step (parallel/engine_access.cpp).
  // Host f32 copies of one unit's flat parameters (the master copy when there is one) /
  // gradients (this rank's host sums when offloaded), and upload of parameters (master and stored).
  // With ZeRO-3 read_params gathers the unit: every rank of the group must call it.
  std::vector<float> read_params(int unit) const;
  std::vector<float> read_grads(int unit) const;
  void write_params(int unit, const std::vector<float>& values);

  // What this rank holds of a unit, for checkpoints: its stored weights ("weights"),
  // their f32 masters ("master") and the optimizer's state (by the optimizer's names),
  // each a tensor over elements `range` of the unit (this rank's tensor-parallel slice of
  // it). `shared`: every data-parallel rank holds the same values (ZeRO-0 everything,
  // stages 1-2 the weights, AdaLomo's state), so one of them writes them. AdaLomo's state
  // is laid out by adalomo_statistics() (optim/adalomo.h), its range the whole unit.
  struct Held {
    std::string kind;
    Tensor tensor;
    UnitSpan range;
    bool shared = false;
  };
  std::vector<Held> held(int unit) const;
  // The step counters a checkpoint keeps besides tensors.
  struct Progress {
    int updates = 0;  // optimizer updates applied (the bias corrections' step)
    float loss_scale = 1.0f;
    int clean_steps = 0;  // of the loss scaler
  };
  Progress progress() const;
  // After a checkpoint's state was read: the counters, and (offloaded f32 weights, which a
  // checkpoint stores once) the host masters from the restored weights.
  void restore(const Progress& progress);

 private:
  std::vector<int> units_read_by(int unit) const;
  int ranks() const { return options_.data_parallel ? options_.data_parallel->size() : 1; }
  bool fused() const { return optimizer_ && optimizer_->fused(); }
  // Whether a fused optimizer reduce-scatters (rather than all-reduces) its gradients.
  bool fused_scatter() const;
  void allocate_unit(int unit, bool stored_grads, bool has_master);
  void forward();
  // Tells the allocator that `pass` (e.g. "backward of ") runs on `unit` now.
  void set_unit_phase(const std::string& pass, int unit);
  // The learning rate and gradient factor of an update made during backward.
  struct UpdateNow {
    float lr = 0.0f;
    float grad_scale = 1.0f;
  };
  // `reduce`: reduce each unit's gradient once the step's last micro-batch completes it.
  // `update_now` (offload only): update each unit once its gradient sum is complete.
  // Returns the seconds compute waited for the reductions after the last unit (events).
  double backward(bool reduce, const UpdateNow* update_now);
  // Offload: reduces a completed unit's gradient and hands this rank's span to the host.
  void offload_gradient(int unit);
  // Offload: adds the handed-over gradients into the host sums (and updates, see backward).
  void accept_offloaded(const UpdateNow* update_now);
  // Offloaded with nothing waiting for the global norm (no clipping, no loss scaling): the
  // last micro-batch's backward updates each unit as its gradient sum completes.
  bool offload_updates_in_backward() const {
    return offload_ && options_.clip_grad <= 0 && !options_.loss_scale.enabled;
  }
  // Sums a host value over the data-parallel group (identity with one rank).
  double sum_over_ranks(double value);
  // Sums a host value over `group` (identity without one).
  double sum_over(Communicator* group, double value);
  TpSlice tp_slice() const;
  // In-place collectives over the data-parallel group (no-ops with one rank).
  void all_reduce(const Tensor& t);
  // A unit's reduce-scatter into a new shard-sized buffer (comm_buffers), maybe in flight.
  struct Scatter {
    int unit = -1;
    Buffer shard;
    std::unique_ptr<CommRequest> request;  // null when already done (no group)
  };
  // Starts summing `padded` over the group into a new shard-sized buffer.
  Scatter start_reduce_scatter(int unit, const Tensor& padded);
  // Sums `padded` over the group into a new shard-sized buffer: started and waited for.
  Buffer reduce_scatter(int unit, const Tensor& padded);
  // ZeRO-2/3 in backward: waits for `scatter` (when there is one), adds its shard into the
  // unit's stored gradient and releases the unit's whole gradient.
  void finish_scatter(std::optional<Scatter>& scatter);
  // Fills a whole-unit buffer (padded length) with every rank's shard from `full`.
  void all_gather_shards(int unit, const Tensor& full);
  // The whole unit (padded, in shard's dtype) in a new buffer, from every rank's shard.
  Buffer gather(int unit, const Tensor& shard) const;
  // sum += the sum of squares of t, which holds elements begin .. of unit u, over the
  // elements this rank counts in the global norm.
  // `backend` runs the kernel: the device's, or the host pool's for offloaded sums.
  void add_square_sum(Backend& backend, Tensor sum, int unit, const Tensor& t, int64_t begin) const;
  // The global sum of squares from this rank's part; `sharded`: each data-parallel rank
  // holds a part, so add over them too.
  double global_square_sum(float local, bool sharded);
  // The stored weights this rank updates: its span of the whole unit, or its shard.
  Tensor updated_weights(int unit) const;
  StepStats accumulate_step(const std::vector<MicroBatch>& micro_batches, StepStats stats);
  void update_accumulated(int unit, const Tensor& grads, float lr, float grad_scale);
  // This rank's sum of squares of the step's gradients (device sums, or offloaded ones).
  float local_square_sum(const std::vector<Buffer>& zero1_shards);
  StepStats fused_step(const MicroBatch& batch, StepStats stats);
  // One fused backward pass; updates the units when `update`, else only measures (the
  // norm pass). Returns the sum of squares of all gradients over all ranks.
  double fused_backward(bool update, float lr, float grad_scale, bool keep_activations);
  // Reduces a unit's transient gradient, adds its square sum to `sum` and, when
  // `update`, applies the fused update.
  void fused_reduce_and_update(int unit, Tensor sum, bool update, float lr, float grad_scale);
  std::vector<float> read_f32(const Tensor& t) const;
  // The f32 master weights of a unit's span (on the device, or offloaded); undefined if none.
  Tensor master(int unit) const;

  Model& model_;
  Backend& be_;
  Allocator& alloc_;
  EngineOptions options_;
  DType compute_;     // the dtype of transient gradients (core/compute_dtype.h)
  DType grad_dtype_;  // of the stored gradient sums (optim/grad_accumulation.h)
  std::vector<ShardLayout> shards_;
  std::vector<UnitSpan> spans_;  // the part of each unit this rank's optimizer updates
  std::vector<std::vector<UnitSpan>> counted_;  // per unit: elements this rank adds to norms
  std::vector<Buffer> param_buffers_, grad_buffers_, master_buffers_;
  UnitTensors stored_;               // weights (whole, or shards with ZeRO-3) and gradients
  std::vector<Tensor> full_params_;  // whole padded weight buffers (ZeRO 0-2)
  std::vector<Tensor> masters_;      // f32 master copies over the spans (empty when none)
  std::unique_ptr<WorkingCopies> work_;
  Buffer scalars_;  // device scalars: the gradient norm, and values summed over ranks
  std::unique_ptr<Event> waits_start_, waits_end_;  // around DDP's waits for reductions
  std::unique_ptr<Optimizer> optimizer_;            // on the device (none when offloaded)
  std::unique_ptr<OptimizerOffload> offload_;       // the optimizer in host memory
  int updates_ = 0;  // optimizer updates applied (skipped steps excluded)
  LossScaler scaler_;
};

// Number of target tokens (targets >= 0) in a micro-batch.
int64_t count_targets(const MicroBatch& batch);

}  // namespace llmft
