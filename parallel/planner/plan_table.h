// The planner's result for people: the workload and the devices assumed, the best
// `top` fitting layouts ranked by predicted step time (the chosen one marked), then up
// to `top` rejected layouts, closest to fitting first, each with the reason.
#pragma once

#include <string>

#include "parallel/planner/planner.h"

namespace llmft {

// REQUIRES: top >= 1
std::string plan_table(const PlanRequest& request, const PlanResult& result, int top);

}  // namespace llmft
