// The Engine's state from outside a step (parallel/engine.h): reading and writing a unit's
// parameters (gathering ZeRO-3 shards and master shards), its gradients, the tensors a
// checkpoint moves (Engine::held) and the step counters.
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/host_convert.h"
#include "parallel/engine.h"

namespace llmft {

std::vector<float> Engine::read_f32(const Tensor& t) const {
  std::vector<uint8_t> bytes(t.bytes());
  be_.copy_to_host(bytes.data(), t);
  return from_dtype_bytes(bytes, t.dtype);
}

std::vector<float> Engine::read_params(int unit) const {
  const ShardLayout& s = shards_[unit];
  // The f32 master weights are exact: read them whole, or gather their shards (padded
  // to the shard length). Otherwise the stored weights, gathered under ZeRO-3.
  Buffer full;
  const Tensor masters = master(unit);
  if (masters.defined()) {
    if (spans_[unit].size() == s.numel) return read_f32(masters);
    Buffer staging = alloc_.allocate(static_cast<size_t>(s.shard) * sizeof(float),
                                     MemoryCategory::comm_buffers, "master shard");
    Tensor mine = staging.as(DType::f32, {s.shard});
    be_.fill(mine, 0.0f);
    be_.copy(mine.view(0, {spans_[unit].size()}), masters);
    full = gather(unit, mine);
  } else if (options_.zero_stage == 3) {
    full = gather(unit, stored_.params[unit]);
  } else {
    return read_f32(stored_.params[unit]);
  }
  const DType dtype = masters.defined() ? DType::f32 : options_.dtype;
  return read_f32(full.as(dtype, {s.padded}).view(0, {s.numel}));
}

std::vector<Engine::Held> Engine::held(int unit) const {
  const ShardLayout& s = shards_[unit];
  const UnitSpan span = spans_[unit];
  const bool span_shared = span.size() == s.numel;
  std::vector<Held> pieces;
  if (options_.zero_stage == 3) {
    const UnitSpan owned = s.owned();
    pieces.push_back({"weights", stored_.params[unit].view(0, {owned.size()}), owned, false});
  } else {
    pieces.push_back({"weights", stored_.params[unit], UnitSpan{0, s.numel}, true});
  }
  // Offloaded f32 weights and their host masters are equal: a checkpoint keeps them once.
  if (master(unit).defined() && options_.dtype != DType::f32)
    pieces.push_back({"master", master(unit), span, span_shared});
  if (optimizer_ || offload_) {
    for (const OptimizerState& state :
         optimizer_ ? optimizer_->state(unit) : offload_->state(unit)) {
      const bool adalomo = options_.optimizer.kind == OptimizerKind::adalomo;
      pieces.push_back({state.name, state.tensor, adalomo ? UnitSpan{0, s.numel} : span,
                        adalomo || span_shared});
    }
  }
  return pieces;
}

Engine::Progress Engine::progress() const {
  return Progress{updates_, scaler_.scale(), scaler_.clean_steps()};
}

void Engine::restore(const Progress& progress) {
  updates_ = progress.updates;
  scaler_.restore(progress.loss_scale, progress.clean_steps);
  if (!offload_ || options_.dtype != DType::f32) return;
  for (size_t u = 0; u < spans_.size(); ++u) {
    const int unit = static_cast<int>(u);
    be_.copy(offload_->master(unit), updated_weights(unit));
  }
  be_.synchronize();  // the host reads its masters next
}

std::vector<float> Engine::read_grads(int unit) const {
  return read_f32(offload_ ? offload_->grads(unit) : stored_.grads[unit]);
}

void Engine::write_params(int unit, const std::vector<float>& values) {
  const ShardLayout& s = shards_[unit];
  LLMFT_REQUIRE(static_cast<int64_t>(values.size()) == s.numel,
                "internal: parameter upload of the wrong size for unit " << unit);
  // This rank's stored weights: the whole unit, or its shard (the padding stays zero).
  const UnitSpan owned = s.owned();
  const bool sharded = options_.zero_stage == 3;
  const float* source = values.data() + (sharded ? owned.begin : 0);
  const int64_t count = sharded ? owned.size() : s.numel;
  const std::vector<uint8_t> bytes = to_dtype_bytes(source, count, options_.dtype);
  be_.copy_to_device(stored_.params[unit].view(0, {count}), bytes.data());
  if (master(unit).defined()) {
    const UnitSpan span = spans_[unit];
    be_.copy_to_device(master(unit), values.data() + span.begin);
  }
}

Tensor Engine::master(int unit) const {
  if (offload_) return offload_->master(unit);
  return masters_.empty() ? Tensor() : masters_[unit];
}

}  // namespace llmft
