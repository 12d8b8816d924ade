#include "launch/plan_json.h"

#include "launch/calibration_cache.h"
#include "parallel/planner/predicted_mfu.h"

namespace llmft {

namespace {

using io::Json;

Json model_json(const ModelConfig& m) {
  return Json::object({
      {"name", Json::string(m.name)},
      {"family", Json::string(family_name(m.family))},
      {"params", Json::number(static_cast<double>(parameter_count(m)))},
      {"layers", Json::number(m.n_layer)},
      {"hidden", Json::number(m.hidden)},
      {"heads", Json::number(m.n_head)},
      {"kv_heads", Json::number(m.n_kv_head)},
      {"vocab", Json::number(m.vocab_size)},
  });
}

Json cluster_json(const PlanRequest& r, const PlanResult& result) {
  const DeviceDescription& d = r.device;
  return Json::object({
      {"device", Json::string(d.name)},
      {"supported", Json::boolean(llmft_runs_on(d))},
      {"gpus", Json::number(r.world)},
      {"gpus_per_node", Json::number(d.gpus_per_node)},
      {"memory_bytes", Json::number(static_cast<double>(d.memory_bytes))},
      {"memory_margin", Json::number(r.memory_margin)},
      {"usable_bytes", Json::number(static_cast<double>(result.usable_bytes))},
      {"overhead_bytes", Json::number(static_cast<double>(d.overhead_bytes))},
      {"overhead_measured", Json::boolean(d.overhead_measured)},
      {"communicator_bytes",
       Json::number(static_cast<double>(r.world > 1 ? d.communicator_bytes : 0))},
      {"communicator_measured", Json::boolean(d.communicator_measured)},
      {"host_memory_bytes", Json::number(static_cast<double>(d.host_memory_bytes))},
      {"host_memory_measured", Json::boolean(d.host_memory_measured)},
      {"usable_host_bytes", Json::number(static_cast<double>(result.usable_host_bytes))},
      {"peak_flops", Json::number(d.peak_flops)},
      {"achieved_fraction", Json::number(d.achieved_fraction)},
      {"intra_node", link_json(d.intra_node)},
      {"inter_node", link_json(d.inter_node)},
  });
}

Json memory_json(const RankMemory& m) {
  auto bytes = [&](MemoryCategory c) {
    return Json::number(static_cast<double>(m.at_peak[index_of(c)]));
  };
  const size_t workspace =
      m.at_peak[index_of(MemoryCategory::workspace)] + m.at_peak[index_of(MemoryCategory::other)];
  return Json::object({
      {"params", bytes(MemoryCategory::params)},
      {"master_params", bytes(MemoryCategory::master_params)},
      {"grads", bytes(MemoryCategory::grads)},
      {"optimizer_state", bytes(MemoryCategory::optimizer_state)},
      {"activations", bytes(MemoryCategory::activations)},
      {"workspace", Json::number(static_cast<double>(workspace))},
      {"comm_buffers", bytes(MemoryCategory::comm_buffers)},
      {"overhead", Json::number(static_cast<double>(m.overhead))},
      {"peak", Json::number(static_cast<double>(m.peak))},
  });
}

// The host pool of an offloaded optimizer, by category at each one's peak.
Json host_json(const RankMemory& m) {
  auto bytes = [&](MemoryCategory c) {
    return Json::number(static_cast<double>(m.host_by_category[index_of(c)]));
  };
  return Json::object({
      {"master_params", bytes(MemoryCategory::master_params)},
      {"grads", bytes(MemoryCategory::grads)},
      {"optimizer_state", bytes(MemoryCategory::optimizer_state)},
      {"comm_buffers", bytes(MemoryCategory::comm_buffers)},
      {"peak", Json::number(static_cast<double>(m.host_peak))},
  });
}

Json time_json(const StepTime& t) {
  return Json::object({
      {"compute_s", Json::number(t.compute_s)},
      {"comm_s", Json::number(t.comm_s)},
      {"exposed_comm_s", Json::number(t.exposed_comm_s)},
      {"host_s", Json::number(t.host_s)},
      {"total_s", Json::number(t.total_s)},
  });
}

Json candidate_json(const PlanRequest& r, const Candidate& c) {
  const Workload& w = r.workload;
  const Layout& l = c.layout;
  Json out = Json::object({
      {"dp", Json::number(l.dp)},
      {"tp", Json::number(l.tp)},
      {"zero", Json::number(l.zero_stage)},
      {"optimizer", Json::string(optimizer_kind_name(w.optimizer.kind))},
      {"dtype", Json::string(dtype_name(w.dtype))},
      {"activation_checkpointing", Json::boolean(l.checkpointed_blocks > 0)},
      {"checkpointed_blocks", Json::number(l.checkpointed_blocks)},
      {"offload_optimizer", Json::boolean(l.offload_optimizer)},
      {"sequence_parallel", Json::boolean(l.sequence_parallel)},
      {"micro_batch", Json::number(l.micro_batch)},
      {"grad_accum", Json::number(l.grad_accum)},
      {"seq_len", Json::number(w.seq_len)},
      {"fits", Json::boolean(c.fits)},
      {"predicted_step_s", c.evaluated ? Json::number(c.time.total_s) : Json()},
      {"predicted_mfu", c.evaluated ? Json::number(predicted_mfu(r, c)) : Json()},
      {"memory", c.evaluated ? memory_json(c.memory) : Json()},
      {"host", c.evaluated ? host_json(c.memory) : Json()},
  });
  if (c.evaluated) {
    out.set("time", time_json(c.time));
    out.set("peak_phase", Json::string(c.memory.peak_phase));
  }
  if (!c.fits) out.set("reason", Json::string(c.reason));
  return out;
}

}  // namespace

io::Json plan_json(const PlanRequest& r, const PlanResult& result) {
  Json::Array candidates;
  for (const Candidate& c : result.candidates) candidates.push_back(candidate_json(r, c));
  const Candidate* chosen = result.chosen();
  return Json::object({
      {"model", model_json(r.workload.model)},
      {"cluster", cluster_json(r, result)},
      {"candidates", Json::array(std::move(candidates))},
      {"chosen", chosen ? candidate_json(r, *chosen) : Json()},
  });
}

}  // namespace llmft
