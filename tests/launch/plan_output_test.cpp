// The planner's output: the JSON contract that scripts rely on, and the table for people.
#include <doctest/doctest.h>

#include <cstdio>

#include "launch/plan_json.h"
#include "parallel/flops.h"
#include "parallel/planner/plan_table.h"
#include "parallel/planner/predicted_mfu.h"

using namespace llmft;
using io::Json;

namespace {

PlanRequest gpt2_on_two_gpus(int global_batch) {
  PlanRequest r;
  r.workload.model = preset_config("gpt2");
  r.workload.dtype = DType::bf16;
  r.workload.seq_len = 256;
  r.workload.global_batch = global_batch;
  r.world = 2;
  r.device = device_preset("v100-16g");
  return r;
}

void check_candidate(const Json& c) {
  for (const char* key : {"dp", "tp", "zero", "micro_batch", "grad_accum", "seq_len"}) {
    CHECK(c.at(key).is_number());
  }
  CHECK(c.at("optimizer").as_string() == "adamw");
  CHECK(c.at("dtype").as_string() == "bf16");
  CHECK(c.at("activation_checkpointing").is_bool());
  CHECK(c.at("checkpointed_blocks").is_number());
  CHECK(c.at("predicted_step_s").as_number() > 0);
  CHECK(c.at("peak_phase").is_string());
  const Json& memory = c.at("memory");
  double sum = 0;
  for (const char* key : {"params", "master_params", "grads", "optimizer_state", "activations",
                          "workspace", "comm_buffers", "overhead"}) {
    sum += memory.at(key).as_number();
  }
  CHECK(memory.at("peak").as_number() == sum);
  // The host pool: empty unless the optimizer is offloaded, then its parts add up.
  CHECK(c.at("offload_optimizer").is_bool());
  const Json& host = c.at("host");
  double host_sum = 0;
  for (const char* key : {"master_params", "grads", "optimizer_state", "comm_buffers"}) {
    host_sum += host.at(key).as_number();
  }
  CHECK(host.at("peak").as_number() >= host_sum);  // plus the 512-byte norm scalar
  CHECK(host.at("peak").as_number() - host_sum <= 512);
  CHECK((host.at("peak").as_number() > 0) == c.at("offload_optimizer").as_bool());
  CHECK((c.at("fits").as_bool() == (c.find("reason") == nullptr)));
}

}  // namespace

TEST_CASE("plan JSON: model, cluster, every candidate and the chosen one") {
  const PlanRequest r = gpt2_on_two_gpus(8);
  const PlanResult result = plan_layouts(r);
  const Json json = Json::parse(plan_json(r, result).dump());
  CHECK(json.at("model").at("name").as_string() == "gpt2");
  CHECK(json.at("model").at("params").as_int() == parameter_count(r.workload.model));
  const Json& cluster = json.at("cluster");
  CHECK(cluster.at("device").as_string() == "v100-16g");
  CHECK_FALSE(cluster.at("supported").as_bool());  // compute capability 7.0
  CHECK(cluster.at("gpus").as_int() == 2);
  CHECK(cluster.at("gpus_per_node").as_int() == 8);
  CHECK(cluster.at("memory_bytes").as_int() == 16LL << 30);
  CHECK(cluster.at("memory_margin").as_number() == 0.05);
  CHECK(cluster.at("overhead_bytes").as_int() > 0);
  CHECK_FALSE(cluster.at("overhead_measured").as_bool());  // a preset's assumption
  CHECK(cluster.at("communicator_bytes").as_int() == r.device.communicator_bytes);
  CHECK(r.device.communicator_bytes > 0);  // NCCL's buffers, for two GPUs
  CHECK_FALSE(cluster.at("communicator_measured").as_bool());
  CHECK(cluster.at("host_memory_bytes").as_int() == 64LL << 30);  // a DGX-1's 512 GB over 8
  CHECK_FALSE(cluster.at("host_memory_measured").as_bool());
  bool offloaded = false;
  const Json::Array& candidates = json.at("candidates").as_array();
  REQUIRE(candidates.size() == result.candidates.size());
  for (const Json& c : candidates) {
    check_candidate(c);
    offloaded = offloaded || c.at("offload_optimizer").as_bool();
  }
  CHECK(offloaded);  // AdamW: searched both ways
  check_candidate(json.at("chosen"));
  CHECK(json.at("chosen").dump() == candidates.front().dump());
}

TEST_CASE("plan JSON and table: one GPU holds no communicator buffers") {
  PlanRequest r = gpt2_on_two_gpus(8);
  r.world = 1;
  const PlanResult result = plan_layouts(r);
  const Json json = Json::parse(plan_json(r, result).dump());
  CHECK(json.at("cluster").at("communicator_bytes").as_int() == 0);
  CHECK(plan_table(r, result, 3).find("communicator buffers") == std::string::npos);
}

TEST_CASE("plan JSON: chosen is null when nothing fits; unevaluated layouts have null memory") {
  PlanRequest r = gpt2_on_two_gpus(3);  // dp 2 does not divide 3; dp 1 x tp 2 does
  r.device.memory_bytes = 1 << 20;
  const Json json = Json::parse(plan_json(r, plan_layouts(r)).dump());
  CHECK(json.at("chosen").is_null());
  const Json::Array& candidates = json.at("candidates").as_array();
  const Json& last = candidates.back();
  CHECK(last.at("dp").as_int() == 2);
  CHECK(last.at("memory").is_null());
  CHECK(last.at("predicted_step_s").is_null());
  CHECK(last.at("reason").as_string() == "global batch 3 not divisible by dp 2");
  CHECK(candidates.front().at("reason").as_string().find("usable") != std::string::npos);
}

TEST_CASE("plan table: the chosen layout first, then the rejected ones with the reason") {
  PlanRequest r = gpt2_on_two_gpus(3);
  const std::string table = plan_table(r, plan_layouts(r), 3);
  CHECK(table.find("plan: gpt2 (124M parameters), adamw, bf16, seq-len 256, global batch 3") !=
        std::string::npos);
  CHECK(table.find("2 x v100-16g") != std::string::npos);
  CHECK(table.find("assumed from the preset, not measured") != std::string::npos);
  CHECK(table.find("communicator buffers: 512.00 MiB per device (NCCL), counted as comm_buffers, "
                   "assumed from the preset") != std::string::npos);
  CHECK(table.find("<- chosen") != std::string::npos);
  CHECK(table.find("chosen: dp 1 x tp 2") != std::string::npos);
  CHECK(table.find("dp 2 x tp 1: global batch 3 not divisible by dp 2") != std::string::npos);
}

TEST_CASE("plan JSON and table: a preset's GPUs that llmft cannot run are a comparison") {
  PlanRequest r = gpt2_on_two_gpus(8);
  const std::string v100 = plan_table(r, plan_layouts(r), 3);
  CHECK(v100.find("note: v100-16g GPUs (compute capability 7.0) cannot run llmft's CUDA "
                  "backend") != std::string::npos);
  for (const char* name : {"rtx3090", "a100-80g", "h100-80g", "h200", "cpu"}) {
    CAPTURE(name);
    r.device = device_preset(name);
    const PlanResult result = plan_layouts(r);
    CHECK(Json::parse(plan_json(r, result).dump()).at("cluster").at("supported").as_bool());
    CHECK(plan_table(r, result, 3).find("cannot run") == std::string::npos);
  }
}

TEST_CASE("plan: the predicted MFU of the chosen layout, by hand, in the JSON and the table") {
  const PlanRequest r = gpt2_on_two_gpus(8);
  const PlanResult result = plan_layouts(r);
  const Candidate& chosen = chosen_layout(r, result);
  // Model FLOPs per token by parallel/flops.h (tested against its hand count there), 8
  // windows of 256 tokens a step, over the step time and 2 devices' peak.
  const ModelConfig& m = r.workload.model;
  const double flops = training_flops_per_token(m, 256) * 8 * 256;
  const double expected = flops / (chosen.time.total_s * 2 * 125e12);  // v100: 125 TFLOP/s
  // 1e-12: the same products and quotients of doubles taken in another order (a few ulps),
  // and the JSON's shortest round-trip text; nothing here depends on the CPU.
  CHECK(predicted_mfu(r, chosen) == doctest::Approx(expected).epsilon(1e-12));
  const Json json = Json::parse(plan_json(r, result).dump());
  CHECK(json.at("chosen").at("predicted_mfu").as_number() ==
        doctest::Approx(expected).epsilon(1e-12));
  char line[64];
  std::snprintf(line, sizeof(line), "predicted MFU %.1f%% of 125 TFLOP/s per device",
                expected * 100);
  const std::string table = plan_table(r, result, 5);
  CHECK(table.find(line) != std::string::npos);
  CHECK(table.find("v100-16g preset") != std::string::npos);
}
