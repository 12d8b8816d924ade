#include "parallel/planner/step_work.h"

#include "parallel/dry_run.h"

namespace llmft {

StepWork step_work(const Workload& workload, const Layout& layout, ComputeRule compute) {
  RunShape shape = run_shape(workload, layout, 0, 0);
  shape.compute = compute;
  DryRun run(workload.model, shape);
  run.train_step(1, 1);
  const WorkTally before = run.tally(), host_before = run.host_tally();
  run.train_step(2, 1);
  const WorkTally one = run.tally().minus(before);
  const WorkTally host_one = run.host_tally().minus(host_before);
  StepWork work;
  if (is_fused(workload.optimizer.kind)) {  // one micro-batch per step, updates inside it
    work.micro_batch = one;
    return work;
  }
  const WorkTally after_one = run.tally(), host_after_one = run.host_tally();
  run.train_step(3, 2);
  const WorkTally two = run.tally().minus(after_one);
  const WorkTally host_two = run.host_tally().minus(host_after_one);
  work.micro_batch = two.minus(one);
  work.once = one.minus(work.micro_batch);
  work.host_micro_batch = host_two.minus(host_one);
  work.host_once = host_one.minus(work.host_micro_batch);
  return work;
}

}  // namespace llmft
