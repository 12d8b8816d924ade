// `llmft plan`'s options: the request they make, constraints only when given, and the
// device overrides.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/model.h"
#include "launch/plan_options.h"

using namespace llmft;

namespace {

PlanRequest request_from(const std::vector<std::string>& args) {
  PlanOptions o;
  po::variables_map values;
  REQUIRE(parse_options(args, plan_option_descriptions(o), values, "", false));
  return plan_request(o, values);
}

}  // namespace

TEST_CASE("plan options: the job, the cluster, and constraints only where given") {
  const PlanRequest r =
      request_from({"--model", "llama-65b", "--gpus", "8", "--gpu", "rtx3090", "--optimizer",
                    "lomo", "--dtype", "fp16", "--seq-len", "512", "--global-batch", "8"});
  CHECK(r.workload.model.name == "llama-65b");
  CHECK(r.workload.optimizer.kind == OptimizerKind::lomo);
  CHECK(r.workload.dtype == DType::f16);
  CHECK(r.workload.seq_len == 512);
  CHECK(r.workload.global_batch == 8);
  CHECK(r.workload.clip_grad);
  CHECK(r.world == 8);
  CHECK(r.device.name == "rtx3090");
  CHECK(r.memory_margin == 0.05);
  CHECK_FALSE(r.constraints.tp.has_value());
  CHECK_FALSE(r.constraints.zero_stage.has_value());
  CHECK_FALSE(r.constraints.micro_batch.has_value());
  CHECK_FALSE(r.constraints.checkpointed_blocks.has_value());

  const PlanRequest fixed = request_from(
      {"--tp", "2", "--zero", "0", "--micro-batch", "4", "--activation-checkpointing", "--json"});
  CHECK(fixed.constraints.tp == 2);
  CHECK(fixed.constraints.zero_stage == 0);
  CHECK(fixed.constraints.micro_batch == 4);
  CHECK(fixed.constraints.checkpointed_blocks == ModelOptions::kAllBlocks);
  CHECK(request_from({"--activation-checkpointing=off"}).constraints.checkpointed_blocks == 0);
  CHECK(request_from({"--activation-checkpointing=3"}).constraints.checkpointed_blocks == 3);
  CHECK_THROWS_WITH_AS(request_from({"--activation-checkpointing=6"}),
                       doctest::Contains("the model has 4 blocks; give 0 to 4, or all"), Error);
  CHECK_THROWS_WITH_AS(request_from({"--activation-checkpointing=maybe"}),
                       doctest::Contains("give all, none, or how many of the first blocks"), Error);
}

TEST_CASE("plan options: device overrides") {
  const PlanRequest r = request_from({"--gpu", "a100-40g", "--gpu-memory", "24GiB",
                                      "--gpus-per-node", "4", "--intra-node-bandwidth", "100",
                                      "--inter-node-bandwidth", "12.5", "--memory-margin", "0.1"});
  CHECK(r.device.memory_bytes == 24ULL << 30);
  CHECK(r.device.gpus_per_node == 4);
  CHECK(r.device.intra_node.all_reduce.bandwidth == 100e9);
  CHECK(r.device.intra_node.reduce_scatter.bandwidth == 100e9);
  CHECK(r.device.inter_node.all_gather.bandwidth == 12.5e9);
  CHECK(r.device.peak_flops == device_preset("a100-40g").peak_flops);
  CHECK(r.memory_margin == 0.1);
  CHECK_THROWS_WITH_AS(request_from({"--gpu", "k80"}), doctest::Contains("--gpu k80"), Error);
}
