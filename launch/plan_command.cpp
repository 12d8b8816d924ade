// `llmft plan`: the planner without training — for a model, an optimizer, a dtype, a
// sequence length and a global batch on N devices of a kind, which layout fits, and
// which of those is fastest. Exits non-zero, after printing the search, when none fits.
#include <cstdio>

#include "launch/commands.h"
#include "launch/plan_json.h"
#include "launch/plan_options.h"
#include "parallel/planner/plan_table.h"

namespace llmft {

int run_plan(const Args& args, MpiRuntime& mpi) {
  PlanOptions o;
  po::variables_map values;
  const std::string usage =
      "usage: llmft plan --model MODEL --gpus N --gpu PRESET [--gpu-memory SIZE] [options]\n"
      "Predicts each dp x tp x ZeRO x micro-batch x checkpointing layout's peak memory per\n"
      "device and step time, and picks the fastest that fits; nothing is allocated or run.";
  if (!parse_options(args, plan_option_descriptions(o), values, usage, mpi.rank() == 0)) return 0;
  if (mpi.rank() != 0) return 0;
  const PlanRequest request = plan_request(o, values);
  const PlanResult result = plan_layouts(request);
  if (o.json) {
    std::printf("%s\n", plan_json(request, result).dump().c_str());
  } else {
    std::printf("%s", plan_table(request, result, o.top).c_str());
  }
  std::fflush(stdout);
  chosen_layout(request, result);  // when none fits: an error with what to try
  return 0;
}

}  // namespace llmft
