#include "parallel/planner/planner.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>

#include "core/byte_size.h"
#include "core/error.h"
#include "parallel/mesh.h"
#include "parallel/optimizer_offload.h"

namespace llmft {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<int> searched_tp_sizes(const PlanRequest& r) {
  if (!r.constraints.tp) return valid_tp_sizes(r.world, r.workload.model);
  mesh_shape(r.world, *r.constraints.tp, r.workload.model);  // throws naming what fails
  return {*r.constraints.tp};
}

std::vector<int> searched_stages(const PlanRequest& r, int dp) {
  if (r.constraints.zero_stage) return {*r.constraints.zero_stage};
  if (dp == 1) return {0};
  return {0, 1, 2, 3};
}

std::vector<int> searched_micro_batches(const PlanRequest& r, int windows_per_rank) {
  if (r.constraints.micro_batch) return {*r.constraints.micro_batch};
  if (is_fused(r.workload.optimizer.kind)) return {windows_per_rank};
  return divisors(windows_per_rank);
}

// Why no micro-batch of a dp x tp mesh can keep the global batch, or "".
std::string batch_mismatch(const PlanRequest& r, int dp) {
  const Workload& w = r.workload;
  std::ostringstream why;
  if (w.global_batch % dp != 0) {
    why << "global batch " << w.global_batch << " not divisible by dp " << dp;
    return why.str();
  }
  const int per_rank = w.global_batch / dp;
  if (!r.constraints.micro_batch) return "";
  const int micro_batch = *r.constraints.micro_batch;
  if (per_rank % micro_batch != 0) {
    why << "micro-batch " << micro_batch << " does not divide the " << per_rank
        << " windows per data-parallel rank";
  } else if (is_fused(w.optimizer.kind) && micro_batch != per_rank) {
    why << optimizer_kind_name(w.optimizer.kind) << " cannot accumulate gradients (micro-batch "
        << micro_batch << " would need " << per_rank / micro_batch << " per step)";
  }
  return why.str();
}

std::vector<bool> searched_offload(const PlanRequest& r) {
  if (r.constraints.offload_optimizer) return {*r.constraints.offload_optimizer};
  if (is_fused(r.workload.optimizer.kind)) return {false};  // nothing to offload
  return {false, true};
}

// Sequence parallelism needs tensor parallelism and a micro-batch's rows (micro-batch x
// seq-len) divisible by tp.
std::vector<bool> searched_sequence_parallel(const PlanRequest& r, int tp, int micro_batch) {
  const bool possible = tp > 1 && static_cast<int64_t>(micro_batch) * r.workload.seq_len % tp == 0;
  if (r.constraints.sequence_parallel) {
    if (*r.constraints.sequence_parallel && !possible) return {};
    return {*r.constraints.sequence_parallel};
  }
  if (!possible) return {false};
  return {false, true};
}

bool fits(const RankMemory& m, const PlanResult& result) {
  return m.peak <= result.usable_bytes && m.host_peak <= result.usable_host_bytes;
}

Candidate evaluate(const PlanRequest& r, const Layout& layout, const PlanResult& result) {
  Candidate c;
  c.layout = layout;
  c.evaluated = true;
  c.memory = predict_rank_memory(r.workload, layout, r.device);
  c.time = predict_step_time(r.workload, layout, r.device);
  c.fits = fits(c.memory, result);
  if (c.memory.peak > result.usable_bytes) {
    c.reason = "peak " + format_bytes(static_cast<double>(c.memory.peak)) + " > " +
               format_bytes(static_cast<double>(result.usable_bytes)) + " usable";
  } else if (!c.fits) {
    c.reason = "host pool " + format_bytes(static_cast<double>(c.memory.host_peak)) + " > " +
               format_bytes(static_cast<double>(result.usable_host_bytes)) + " usable host memory";
  }
  return c;
}

// The checkpointing choices of one layout: the given count, else none, all, and (when none
// does not fit and all does) the fewest checkpointed blocks that fit, found by bisection
// since the peak never rises with the count (core/model.h): fewer blocks recompute less.
void add_checkpointing_choices(const PlanRequest& r, Layout layout, PlanResult& result) {
  const int blocks = r.workload.model.n_layer;
  auto add = [&](int checkpointed) {
    layout.checkpointed_blocks = checkpointed;
    result.candidates.push_back(evaluate(r, layout, result));
    return result.candidates.back().fits;
  };
  if (r.constraints.checkpointed_blocks) {
    add(std::min(*r.constraints.checkpointed_blocks, blocks));
    return;
  }
  const bool none_fits = add(0);
  const bool all_fit = add(blocks);
  if (none_fits || !all_fit) return;
  int lo = 0, hi = blocks;  // lo does not fit, hi does
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    layout.checkpointed_blocks = mid;
    (fits(predict_rank_memory(r.workload, layout, r.device), result) ? hi : lo) = mid;
  }
  if (hi < blocks) add(hi);
}

// The layout a mesh would have under the constraints alone, for a candidate rejected
// before any micro-batch could be chosen.
Candidate rejected_mesh(const PlanRequest& r, int dp, int tp, std::string reason) {
  Candidate c;
  c.layout.dp = dp;
  c.layout.tp = tp;
  c.layout.zero_stage = r.constraints.zero_stage.value_or(0);
  c.layout.micro_batch = r.constraints.micro_batch.value_or(0);
  c.layout.grad_accum = 0;
  c.layout.checkpointed_blocks =
      std::min(r.constraints.checkpointed_blocks.value_or(0), r.workload.model.n_layer);
  c.layout.offload_optimizer = r.constraints.offload_optimizer.value_or(false);
  c.reason = std::move(reason);
  return c;
}

bool ranks_before(const Candidate& a, const Candidate& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.evaluated != b.evaluated) return a.evaluated;
  if (!a.fits) return a.memory.peak < b.memory.peak;
  return std::tie(a.time.total_s, a.memory.peak) < std::tie(b.time.total_s, b.memory.peak);
}

void check_request(const PlanRequest& r) {
  const Workload& w = r.workload;
  LLMFT_REQUIRE(r.world >= 1, "--gpus must be at least 1 (got " << r.world << ")");
  LLMFT_REQUIRE(w.global_batch >= 1,
                "--global-batch must be at least 1 (got " << w.global_batch << ")");
  LLMFT_REQUIRE(w.seq_len >= 1 && w.seq_len <= w.model.max_seq_len,
                "--seq-len " << w.seq_len << " must lie between 1 and the context of --model "
                             << w.model.name << " (" << w.model.max_seq_len << " positions)");
  LLMFT_REQUIRE(r.memory_margin >= 0 && r.memory_margin < 1,
                "--memory-margin must lie in [0, 1) (got " << r.memory_margin << ")");
  const LayoutConstraints& c = r.constraints;
  LLMFT_REQUIRE(!c.zero_stage || (*c.zero_stage >= 0 && *c.zero_stage <= 3),
                "--zero " << *c.zero_stage << ": ZeRO stages are 0, 1, 2 and 3");
  LLMFT_REQUIRE(!c.micro_batch || *c.micro_batch >= 1,
                "--micro-batch must be at least 1 (got " << *c.micro_batch << ")");
  if (c.offload_optimizer.value_or(false)) check_offload(w.optimizer.kind);
  if (c.sequence_parallel.value_or(false)) {
    const std::vector<int> sizes = searched_tp_sizes(r);
    LLMFT_REQUIRE(std::any_of(sizes.begin(), sizes.end(), [](int tp) { return tp > 1; }),
                  "--sequence-parallel=on splits the sequence over the tensor-parallel group, "
                  "but "
                      << (c.tp ? "--tp " + std::to_string(*c.tp) + " leaves no such group"
                               : "with " + std::to_string(r.world) +
                                     " rank(s) and the heads of --model no tensor-parallel "
                                     "size above 1 is possible")
                      << "; use --tp 2 or more, or --sequence-parallel=auto");
  }
}

}  // namespace

const Candidate* PlanResult::chosen() const {
  if (candidates.empty() || !candidates.front().fits) return nullptr;
  return &candidates.front();
}

PlanResult plan_layouts(const PlanRequest& r) {
  check_request(r);
  PlanResult result;
  result.usable_bytes = usable_memory(r.device, r.memory_margin);
  result.usable_host_bytes = static_cast<size_t>(static_cast<double>(r.device.host_memory_bytes) *
                                                 (1.0 - r.memory_margin));
  for (int tp : searched_tp_sizes(r)) {
    const int dp = r.world / tp;
    const std::string mismatch = batch_mismatch(r, dp);
    if (!mismatch.empty()) {
      result.candidates.push_back(rejected_mesh(r, dp, tp, mismatch));
      continue;
    }
    const int per_rank = r.workload.global_batch / dp;
    for (int zero_stage : searched_stages(r, dp)) {
      for (int micro_batch : searched_micro_batches(r, per_rank)) {
        for (bool offload : searched_offload(r)) {
          for (bool sequence : searched_sequence_parallel(r, tp, micro_batch)) {
            const Layout layout{dp, tp,      zero_stage, micro_batch, per_rank / micro_batch,
                                0,  offload, sequence};
            add_checkpointing_choices(r, layout, result);
          }
        }
      }
    }
  }
  std::stable_sort(result.candidates.begin(), result.candidates.end(), ranks_before);
  return result;
}

const Candidate& chosen_layout(const PlanRequest& r, const PlanResult& result) {
  if (const Candidate* chosen = result.chosen()) return *chosen;
  const Workload& w = r.workload;
  std::ostringstream msg;
  msg << "no layout of " << describe_workload(w) << " fits " << r.world << " x " << r.device.name
      << " (" << format_bytes(static_cast<double>(result.usable_bytes))
      << " usable per device with a " << r.memory_margin * 100 << "% margin)";
  if (result.candidates.empty() || !result.candidates.front().evaluated) {
    msg << ": no layout keeps the global batch";
    for (const Candidate& c : result.candidates) msg << "; " << c.reason;
    if (r.constraints.sequence_parallel.value_or(false)) {
      msg << "; --sequence-parallel=on needs a micro-batch's rows (micro-batch x --seq-len "
          << w.seq_len << ") to divide by --tp: change --seq-len, or use --sequence-parallel=auto";
    }
    LLMFT_FAIL(msg.str());
  }
  const Candidate& smallest = result.candidates.front();
  const CategoryBytes& bytes = smallest.memory.at_peak;
  msg << ". The smallest, " << describe_layout(smallest.layout) << ", needs "
      << format_bytes(static_cast<double>(smallest.memory.peak)) << " per device ("
      << describe_bytes(bytes) << ", fixed overhead "
      << format_bytes(static_cast<double>(smallest.memory.overhead)) << "; peak in "
      << smallest.memory.peak_phase << "). Try";
  if (!is_fused(w.optimizer.kind)) {
    msg << " --optimizer lomo (no gradients or optimizer state kept),";
    if (r.constraints.offload_optimizer.value_or(true) == false) {
      msg << " --offload-optimizer (master weights and optimizer state in host memory),";
    }
  }
  if (is_fused(w.optimizer.kind) && smallest.layout.micro_batch > 1) {
    msg << " a smaller --global-batch (" << optimizer_kind_name(w.optimizer.kind)
        << " cannot accumulate, so each rank takes global batch / dp at once),";
  }
  if (w.dtype == DType::f32) msg << " --dtype bf16 (half the weight bytes),";
  if (r.constraints.checkpointed_blocks.value_or(-1) == 0) msg << " --activation-checkpointing,";
  msg << " a shorter --seq-len (activations "
      << format_bytes(static_cast<double>(bytes[index_of(MemoryCategory::activations)]))
      << "), or more devices (ZeRO-3 and tensor parallelism divide the model by the world)";
  if (r.constraints.tp || r.constraints.zero_stage || r.constraints.micro_batch) {
    msg << "; or leave --tp, --zero and --micro-batch to the planner";
  }
  LLMFT_FAIL(msg.str());
}

}  // namespace llmft
