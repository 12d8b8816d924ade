#include "parallel/engine.h"

#include <algorithm>
#include <cmath>

#include "comm/host_reduce.h"
#include "core/error.h"
#include "core/param_init.h"
#include "optim/grad_clip.h"
#include "optim/optimizer.h"

namespace llmft {

int64_t count_targets(const MicroBatch& batch) {
  int64_t n = 0;
  const int64_t size = static_cast<int64_t>(batch.batch) * batch.seq_len;
  for (int64_t i = 0; i < size; ++i) n += batch.targets[i] >= 0 ? 1 : 0;
  return n;
}

Engine::Engine(Model& model, Backend& backend, Allocator& allocator, const EngineOptions& options)
    : model_(model),
      be_(backend),
      alloc_(allocator),
      options_(options),
      compute_(compute_dtype(backend.compute_rule(), options.dtype)),
      grad_dtype_(accumulated_grad_dtype(options.optimizer.grad_accum_dtype, options.dtype)),
      scaler_(options.loss_scale) {
  LLMFT_REQUIRE(options_.dtype != DType::i32, "internal: weights cannot be stored as i32");
  alloc_.set_phase("weights and optimizer state");
  LLMFT_REQUIRE(options_.zero_stage >= 0 && options_.zero_stage <= 3,
                "--zero " << options_.zero_stage << ": ZeRO stages are 0, 1, 2 and 3");
  if (ranks() == 1) options_.zero_stage = 0;  // one rank: nothing to shard across
  model_.set_compute_dtype(compute_);
  const std::vector<UnitLayout>& units = model_.units();
  const int rank = options_.data_parallel ? options_.data_parallel->rank() : 0;
  for (const UnitLayout& u : units) {
    shards_.push_back(shard_layout(u.numel, ranks(), rank));
    spans_.push_back(update_span(options_.optimizer.kind, options_.zero_stage, shards_.back()));
    counted_.emplace_back();
    for (const ParamInfo& p : u.params) {
      if (!tp_counts(p, tp_slice())) continue;
      if (!counted_.back().empty() && counted_.back().back().end == p.offset) {
        counted_.back().back().end += p.numel();
      } else {
        counted_.back().push_back(UnitSpan{p.offset, p.offset + p.numel()});
      }
    }
  }
  const bool offloaded = options_.trainable && options_.offload.kernels;
  if (offloaded) {
    offload_ = std::make_unique<OptimizerOffload>(be_, options_.offload, options_.optimizer, units,
                                                  spans_, options_.dtype, compute_);
  } else if (options_.trainable) {
    optimizer_ =
        make_optimizer(options_.optimizer, be_, alloc_, units, spans_, options_.tensor_parallel);
  }
  const bool stored_grads = options_.trainable && !fused() && !offloaded;
  const bool has_master = stored_grads && options_.dtype != DType::f32;
  for (size_t u = 0; u < units.size(); ++u) {
    allocate_unit(static_cast<int>(u), stored_grads, has_master);
    if (!options_.initialize) continue;
    // This rank's slice of the whole model's initial values; padding rows stay zero.
    std::vector<float> host(static_cast<size_t>(units[u].numel), 0.0f);
    for (const ParamInfo& p : units[u].params) {
      for (const TpRun& run : tp_runs(p, tp_slice())) {
        initial_values(p, options_.seed, run.full, run.count, host.data() + p.offset + run.local);
      }
    }
    write_params(static_cast<int>(u), host);
  }
  const bool transient = fused() || offloaded || (stored_grads && options_.zero_stage >= 2);
  work_ =
      std::make_unique<WorkingCopies>(be_, alloc_, stored_, shards_, transient,
                                      options_.zero_stage == 3 ? options_.data_parallel : nullptr);
  // Scalars summed over the data-parallel ranks: the step's, and evaluate's loss sums.
  if (options_.trainable || options_.data_parallel) {
    scalars_ = alloc_.allocate(2 * sizeof(float), MemoryCategory::other, "step scalars");
  }
  waits_start_ = be_.create_event();
  waits_end_ = be_.create_event();
}

bool Engine::fused_scatter() const {
  return fused_reduce_scatters(options_.optimizer.kind, options_.zero_stage);
}

void Engine::allocate_unit(int unit, bool stored_grads, bool has_master) {
  const ShardLayout& s = shards_[unit];
  const std::string& name = model_.units()[unit].name;
  const DType dtype = options_.dtype;
  const size_t width = dtype_size(dtype);
  const bool shard_weights = options_.zero_stage == 3;
  const int64_t weight_elements = shard_weights ? s.shard : s.padded;
  param_buffers_.push_back(alloc_.allocate(static_cast<size_t>(weight_elements) * width,
                                           MemoryCategory::params, "params " + name));
  Tensor weights = param_buffers_.back().as(dtype, {weight_elements});
  be_.fill(weights, 0.0f);  // the padding stays zero
  full_params_.push_back(shard_weights ? Tensor() : weights);
  stored_.params.push_back(shard_weights ? weights : weights.view(0, {s.numel}));
  if (stored_grads) {
    // DDP needs the unit, ZeRO-1 the padded unit for its reduce-scatter, ZeRO-2/3 a shard.
    const int64_t grad_elements =
        options_.zero_stage >= 2 ? s.shard : (options_.zero_stage == 1 ? s.padded : s.numel);
    grad_buffers_.push_back(
        alloc_.allocate(static_cast<size_t>(grad_elements) * dtype_size(grad_dtype_),
                        MemoryCategory::grads, "grads " + name));
    Tensor grads = grad_buffers_.back().as(grad_dtype_, {grad_elements});
    be_.fill(grads, 0.0f);
    stored_.grads.push_back(options_.zero_stage >= 2 ? grads : grads.view(0, {s.numel}));
  }
  if (has_master) {
    const int64_t n = spans_[unit].size();
    master_buffers_.push_back(alloc_.allocate(static_cast<size_t>(n) * sizeof(float),
                                              MemoryCategory::master_params, "master " + name));
    masters_.push_back(master_buffers_.back().as(DType::f32, {n}));
  }
}

std::vector<int> Engine::units_read_by(int unit) const {
  std::vector<int> units = model_.extra_units_read(unit);
  units.insert(units.begin(), unit);
  return units;
}

void Engine::set_unit_phase(const std::string& pass, int unit) {
  const std::string& name = model_.units()[unit].name;  // "embedding", "block.3", "head"
  const size_t dot = name.find('.');
  const std::string what =
      dot == std::string::npos ? "the " + name : name.substr(0, dot) + " " + name.substr(dot + 1);
  alloc_.set_phase(pass + what);
}

void Engine::forward() {
  alloc_.set_phase("forward");
  const int n = static_cast<int>(model_.units().size());
  for (int u = 0; u < n; ++u) {
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    if (u + 1 < n) work_->prefetch_params(units_read_by(u + 1));  // overlaps this unit
    model_.forward_unit(u, work_->view());
    work_->release_params(units);
  }
}

double Engine::backward(bool reduce, const UpdateNow* update_now) {
  const int n = static_cast<int>(model_.units().size());
  std::vector<std::unique_ptr<CommRequest>> pending;
  // ZeRO-2/3 with a communicator that overlaps compute (NCCL): a unit's reduce-scatter runs
  // behind the next unit's backward and is finished once that is queued (its whole
  // gradient lives until then); otherwise at once.
  std::optional<Scatter> scattering;
  for (int u = n - 1; u >= 0; --u) {
    set_unit_phase("backward of ", u);
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    if (u > 0) work_->prefetch_params(units_read_by(u - 1));
    work_->acquire_grads(units);
    model_.backward_unit(u, work_->view(), false);
    work_->release_params(units);
    // The host takes the gradients handed over one unit ago while the device runs this one.
    if (offload_) accept_offloaded(update_now);
    finish_scatter(scattering);
    for (int x : units) {
      if (model_.grads_completed_by(x) != u) continue;
      if (offload_) {
        offload_gradient(x);
        continue;
      }
      if (options_.zero_stage >= 2) {
        // Sharded gradients: keep only this rank's sum of the unit's gradient.
        finish_scatter(scattering);  // one in flight at a time
        scattering = start_reduce_scatter(x, work_->padded_grad(x));
        if (!options_.data_parallel || !options_.data_parallel->overlaps_compute()) {
          finish_scatter(scattering);  // nothing would progress meanwhile: keep no memory
        }
        continue;
      }
      work_->flush_grads(x);
      if (reduce && options_.zero_stage == 0 && options_.data_parallel) {
        pending.push_back(options_.data_parallel->all_reduce(stored_.grads[x], ReduceOp::sum));
      }
    }
  }
  if (offload_) accept_offloaded(update_now);
  finish_scatter(scattering);
  // Nothing left to wait for: the device runs on while the host queues what comes next.
  if (pending.empty()) return 0.0;
  // How long compute waits for the reductions compute did not hide.
  be_.record(*waits_start_, Queue::compute);
  for (auto& request : pending) request->wait_on_device();
  be_.record(*waits_end_, Queue::compute);
  be_.synchronize(*waits_end_);
  return be_.elapsed_seconds(*waits_start_, *waits_end_);
}

void Engine::offload_gradient(int unit) {
  const int64_t n = spans_[unit].size();
  if (options_.zero_stage == 0) {
    const Tensor grad = work_->view().grads[unit];
    all_reduce(grad);
    offload_->receive(unit, grad);
  } else {
    Buffer shard = reduce_scatter(unit, work_->padded_grad(unit));
    offload_->receive(unit, shard.as(compute_, {n}));
  }
  work_->release_grads(unit);
}

void Engine::accept_offloaded(const UpdateNow* update_now) {
  for (int unit : offload_->accept_received()) {
    if (!update_now) continue;
    add_square_sum(offload_->kernels(), offload_->scalar(), unit, offload_->grads(unit),
                   spans_[unit].begin);
    update_accumulated(unit, offload_->grads(unit), update_now->lr, update_now->grad_scale);
  }
}

double Engine::sum_over_ranks(double value) {
  return sum_over(options_.data_parallel, value);
}

double Engine::sum_over(Communicator* group, double value) {
  if (!group) return value;
  return reduce_host_value(*group, be_, scalars_.as(DType::f32, {2}).view(1, {1}), value,
                           ReduceOp::sum);
}

TpSlice Engine::tp_slice() const {
  Communicator* tp = options_.tensor_parallel;
  return tp ? TpSlice{tp->rank(), tp->size()} : TpSlice{};
}

void Engine::all_reduce(const Tensor& t) {
  if (options_.data_parallel)
    options_.data_parallel->all_reduce(t, ReduceOp::sum)->wait_on_device();
}

Engine::Scatter Engine::start_reduce_scatter(int unit, const Tensor& padded) {
  const int64_t n = shards_[unit].shard;
  Scatter scatter{unit,
                  alloc_.allocate(static_cast<size_t>(n) * dtype_size(padded.dtype),
                                  MemoryCategory::comm_buffers, "gradient shard"),
                  nullptr};
  Tensor out = scatter.shard.as(padded.dtype, {n});
  if (options_.data_parallel) {
    scatter.request = options_.data_parallel->reduce_scatter(padded, out);
  } else {
    be_.copy(out, padded);
  }
  return scatter;
}

Buffer Engine::reduce_scatter(int unit, const Tensor& padded) {
  Scatter scatter = start_reduce_scatter(unit, padded);
  if (scatter.request) scatter.request->wait_on_device();
  return std::move(scatter.shard);
}

void Engine::finish_scatter(std::optional<Scatter>& scatter) {
  if (!scatter) return;
  if (scatter->request) scatter->request->wait_on_device();
  const int unit = scatter->unit;
  be_.add_inplace(stored_.grads[unit], scatter->shard.as(compute_, {shards_[unit].shard}));
  work_->release_grads(unit);
  scatter.reset();
}

void Engine::all_gather_shards(int unit, const Tensor& full) {
  if (!options_.data_parallel) return;
  const ShardLayout& s = shards_[unit];
  // The send buffer must not overlap the receive buffer: stage this rank's shard.
  Buffer staging = alloc_.allocate(static_cast<size_t>(s.shard) * dtype_size(full.dtype),
                                   MemoryCategory::comm_buffers, "weight shard");
  Tensor mine = staging.as(full.dtype, {s.shard});
  be_.copy(mine, full.view(s.begin, {s.shard}));
  options_.data_parallel->all_gather(mine, full)->wait_on_device();
}

Buffer Engine::gather(int unit, const Tensor& shard) const {
  const ShardLayout& s = shards_[unit];
  Buffer full = alloc_.allocate(static_cast<size_t>(s.padded) * dtype_size(shard.dtype),
                                MemoryCategory::comm_buffers, "gathered unit");
  Tensor out = full.as(shard.dtype, {s.padded});
  if (options_.data_parallel) {
    options_.data_parallel->all_gather(shard, out)->wait_on_device();
  } else {
    be_.copy(out, shard);
  }
  return full;
}

void Engine::add_square_sum(Backend& backend, Tensor sum, int unit, const Tensor& t,
                            int64_t begin) const {
  const int64_t end = begin + t.numel();
  for (const UnitSpan& span : counted_[unit]) {
    const int64_t lo = std::max(span.begin, begin), hi = std::min(span.end, end);
    if (lo < hi) backend.sum_squares(sum, t.view(lo - begin, {hi - lo}));
  }
}

double Engine::global_square_sum(float local, bool sharded) {
  // Data-parallel replicas are the same everywhere; shards add up across ranks. Tensor-
  // parallel slices always add up (replicated parameters were counted once).
  const double data_parallel = sharded ? sum_over_ranks(local) : local;
  return sum_over(options_.tensor_parallel, data_parallel);
}

StepStats Engine::train_step(const std::vector<MicroBatch>& micro_batches, int step) {
  LLMFT_REQUIRE(options_.trainable, "internal: train_step on an inference-only engine");
  LLMFT_REQUIRE(!micro_batches.empty(), "internal: a step needs at least one micro-batch");
  StepStats stats;
  for (const MicroBatch& mb : micro_batches) stats.target_tokens += count_targets(mb);
  if (options_.tensor_parallel)
    options_.tensor_parallel->set_context("step " + std::to_string(step));
  if (options_.data_parallel) {
    options_.data_parallel->set_context("step " + std::to_string(step));
    stats.target_tokens = std::llround(sum_over_ranks(static_cast<double>(stats.target_tokens)));
  }
  LLMFT_REQUIRE(stats.target_tokens > 0,
                "step " << step
                        << " has no target tokens in its batch: every position is masked; "
                           "check the dataset's prompt/response fields");
  stats.loss_scale = scaler_.scale();
  stats.lr = options_.schedule.at(step);
  model_.reset_loss();
  if (fused()) {
    check_accumulation(options_.optimizer.kind, static_cast<int>(micro_batches.size()));
    return fused_step(micro_batches[0], stats);
  }
  return accumulate_step(micro_batches, stats);
}

StepStats Engine::accumulate_step(const std::vector<MicroBatch>& micro_batches, StepStats stats) {
  const float loss_scale = stats.loss_scale / static_cast<float>(stats.target_tokens);
  for (const Tensor& g : stored_.grads) be_.fill(g, 0.0f);
  UpdateNow now{stats.lr, 1.0f / stats.loss_scale};
  const bool update_in_backward = offload_updates_in_backward();
  if (offload_) {
    offload_->zero_grads();
    offload_->kernels().fill(offload_->scalar(), 0.0f);
    if (update_in_backward) offload_->begin_step(++updates_);
  }
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    const bool last = m + 1 == micro_batches.size();
    model_.begin_micro_batch(micro_batches[m], loss_scale, LogitRows::none);
    forward();
    stats.exposed_comm_seconds += backward(last, last && update_in_backward ? &now : nullptr);
    model_.end_micro_batch();
  }
  alloc_.set_phase("optimizer update");
  stats.loss = sum_over_ranks(model_.loss_sum()) / static_cast<double>(stats.target_tokens);
  // ZeRO-1: each rank sums its shard of every unit's gradient now.
  std::vector<Buffer> shards;
  if (options_.zero_stage == 1 && !offload_) {
    for (size_t u = 0; u < stored_.grads.size(); ++u) {
      const Tensor padded = grad_buffers_[u].as(grad_dtype_, {shards_[u].padded});
      shards.push_back(reduce_scatter(static_cast<int>(u), padded));
    }
  }
  const float local = local_square_sum(shards);
  stats.grad_norm =
      std::sqrt(global_square_sum(local, options_.zero_stage >= 1)) / stats.loss_scale;
  // An update made during the backward is applied whatever the norm (the divergence guard
  // then ends the run, as nothing scales the loss): the step was not skipped.
  stats.skipped = !scaler_.update(!std::isfinite(stats.grad_norm)) && !update_in_backward;
  if (stats.skipped || update_in_backward) return stats;
  const float scale = clip_factor(stats.grad_norm, options_.clip_grad) / stats.loss_scale;
  if (offload_) {
    offload_->begin_step(++updates_);
    for (size_t u = 0; u < spans_.size(); ++u) {
      const int unit = static_cast<int>(u);
      update_accumulated(unit, offload_->grads(unit), stats.lr, scale);
    }
    return stats;
  }
  optimizer_->begin_step(++updates_);
  for (size_t u = 0; u < stored_.params.size(); ++u) {
    const int64_t n = spans_[u].size();
    const Tensor grads = options_.zero_stage == 1   ? shards[u].as(grad_dtype_, {n})
                         : options_.zero_stage >= 2 ? stored_.grads[u].view(0, {n})
                                                    : stored_.grads[u];
    update_accumulated(static_cast<int>(u), grads, stats.lr, scale);
  }
  return stats;
}

float Engine::local_square_sum(const std::vector<Buffer>& zero1_shards) {
  const bool sharded = options_.zero_stage >= 1;
  if (offload_) {
    // Summed during the last backward when it updated; otherwise over the sums now.
    Backend& host = offload_->kernels();
    if (!offload_updates_in_backward()) {
      for (size_t u = 0; u < spans_.size(); ++u) {
        const int unit = static_cast<int>(u);
        add_square_sum(host, offload_->scalar(), unit, offload_->grads(unit), spans_[u].begin);
      }
    }
    float local = 0.0f;
    host.copy_to_host(&local, offload_->scalar());
    return local;
  }
  // The norm of this rank's sums of the gradients (whole units or shards).
  Tensor sum = scalars_.as(DType::f32, {2}).view(0, {1});
  be_.fill(sum, 0.0f);
  for (size_t u = 0; u < stored_.grads.size(); ++u) {
    const int unit = static_cast<int>(u);
    add_square_sum(be_, sum, unit,
                   options_.zero_stage == 1 ? zero1_shards[u].as(grad_dtype_, {shards_[u].shard})
                                            : stored_.grads[u],
                   sharded ? shards_[u].begin : 0);
  }
  float local = 0.0f;
  be_.copy_to_host(&local, sum);
  return local;
}

Tensor Engine::updated_weights(int unit) const {
  const UnitSpan span = spans_[unit];
  return options_.zero_stage == 3 ? stored_.params[unit].view(0, {span.size()})
                                  : full_params_[unit].view(span.begin, {span.size()});
}

void Engine::update_accumulated(int unit, const Tensor& grads, float lr, float grad_scale) {
  const UnitSpan span = spans_[unit];
  const Tensor stored = updated_weights(unit);
  const bool master = !masters_.empty();
  if (offload_) {
    offload_->update(unit, lr, grad_scale, stored);
  } else {
    optimizer_->update_unit(unit, model_.units()[unit], span, master ? masters_[unit] : stored,
                            grads, lr, grad_scale);
  }
  if (master) be_.convert(stored, masters_[unit]);
  if (options_.zero_stage == 1 || options_.zero_stage == 2) {
    all_gather_shards(unit, full_params_[unit]);
  }
}

void Engine::fused_reduce_and_update(int unit, Tensor sum, bool update, float lr,
                                     float grad_scale) {
  const UnitLayout& layout = model_.units()[unit];
  const Tensor grad = work_->view().grads[unit];
  if (fused_scatter()) {
    // LOMO with ZeRO-2/3: this rank's shard of the summed gradient updates its weights.
    Buffer shard = reduce_scatter(unit, work_->padded_grad(unit));
    const Tensor mine = shard.as(compute_, {shards_[unit].shard});
    add_square_sum(be_, sum, unit, mine, shards_[unit].begin);
    if (!update) return;
    const UnitSpan span = spans_[unit];
    optimizer_->update_unit(unit, layout, span, updated_weights(unit), mine.view(0, {span.size()}),
                            lr, grad_scale);
    if (options_.zero_stage == 2) all_gather_shards(unit, full_params_[unit]);
    return;
  }
  all_reduce(grad);
  add_square_sum(be_, sum, unit, grad, 0);
  if (!update) return;
  if (options_.zero_stage < 3) {
    optimizer_->update_unit(unit, layout, whole(layout), stored_.params[unit], grad, lr,
                            grad_scale);
    return;
  }
  // Whole-unit update (AdaLomo) of sharded weights: gather, update, keep this rank's shard.
  const ShardLayout& s = shards_[unit];
  Buffer full = gather(unit, stored_.params[unit]);
  const Tensor weights = full.as(options_.dtype, {s.padded});
  optimizer_->update_unit(unit, layout, whole(layout), weights.view(0, {s.numel}), grad, lr,
                          grad_scale);
  be_.copy(stored_.params[unit], weights.view(s.begin, {s.shard}));
}

double Engine::fused_backward(bool update, float lr, float grad_scale, bool keep_activations) {
  Tensor sum = scalars_.as(DType::f32, {2}).view(0, {1});
  be_.fill(sum, 0.0f);
  const int n = static_cast<int>(model_.units().size());
  for (int u = n - 1; u >= 0; --u) {
    set_unit_phase(update ? "backward of " : "norm pass: backward of ", u);
    const std::vector<int> units = units_read_by(u);
    work_->acquire_params(units);
    if (u > 0) work_->prefetch_params(units_read_by(u - 1));
    work_->acquire_grads(units);
    model_.backward_unit(u, work_->view(), keep_activations);
    work_->release_params(units);
    for (int x : units) {
      if (model_.grads_completed_by(x) != u) continue;
      fused_reduce_and_update(x, sum, update, lr, grad_scale);
      work_->release_grads(x);
    }
  }
  float value = 0.0f;
  be_.copy_to_host(&value, sum);
  return global_square_sum(value, fused_scatter());
}

StepStats Engine::fused_step(const MicroBatch& batch, StepStats stats) {
  const float inv_scale = 1.0f / stats.loss_scale;
  model_.begin_micro_batch(batch, stats.loss_scale / static_cast<float>(stats.target_tokens),
                           LogitRows::none);
  forward();
  stats.loss = sum_over_ranks(model_.loss_sum()) / static_cast<double>(stats.target_tokens);
  // Bias corrections count the updates applied; a skipped step is undone below.
  optimizer_->begin_step(++updates_);
  if (options_.clip_grad > 0 || options_.loss_scale.enabled) {
    // Norm pass: no weight changes until the global norm (and any overflow) is known.
    stats.grad_norm = std::sqrt(fused_backward(false, 0.0f, 0.0f, true)) * inv_scale;
    stats.skipped = !scaler_.update(!std::isfinite(stats.grad_norm));
    if (stats.skipped) --updates_;
    if (!stats.skipped) {
      fused_backward(true, stats.lr, clip_factor(stats.grad_norm, options_.clip_grad) * inv_scale,
                     false);
    }
  } else {
    stats.grad_norm = std::sqrt(fused_backward(true, stats.lr, inv_scale, false)) * inv_scale;
    scaler_.update(!std::isfinite(stats.grad_norm));
  }
  model_.end_micro_batch();
  return stats;
}

double Engine::evaluate(const std::vector<MicroBatch>& batches) {
  // Data-parallel rank r scores micro-batches r, r + dp, ...; every rank then holds each
  // micro-batch's loss sum (one rank's value plus zeros: exact) and adds them in batch
  // order, so the loss is the same bits on any number of data-parallel ranks. Every rank
  // runs as many forwards (one short of batches repeats the last and drops its sum), since
  // a forward may gather ZeRO-3 shards over the data-parallel group.
  const size_t dp = static_cast<size_t>(ranks());
  const size_t dp_rank = options_.data_parallel ? options_.data_parallel->rank() : 0;
  int64_t targets = 0;
  for (const MicroBatch& mb : batches) targets += count_targets(mb);
  LLMFT_REQUIRE(targets > 0,
                "the validation windows hold no target tokens (every position is a "
                "masked prompt); raise --eval-windows or use other --val-data");
  std::vector<double> loss_sums(batches.size(), 0.0);
  for (size_t first = 0; first < batches.size(); first += dp) {
    const size_t mine = first + dp_rank;
    model_.reset_loss();
    model_.begin_micro_batch(batches[std::min(mine, batches.size() - 1)], 0.0f, LogitRows::none);
    forward();
    model_.end_micro_batch();
    if (mine < batches.size()) loss_sums[mine] = model_.loss_sum();
  }
  double loss_sum = 0;
  for (const double batch_sum : loss_sums) loss_sum += sum_over_ranks(batch_sum);
  return loss_sum / static_cast<double>(targets);
}

std::vector<float> Engine::logits(const MicroBatch& batch, LogitRows rows) {
  model_.begin_micro_batch(batch, 0.0f, rows);
  forward();
  std::vector<float> logits = model_.logits();
  model_.end_micro_batch();
  return logits;
}

}  // namespace llmft
