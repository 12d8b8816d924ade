#include "parallel/planner/collective_cost.h"

namespace llmft {

int ring_steps(Collective op, int ranks) {
  return (op == Collective::all_reduce ? 2 : 1) * (ranks - 1);
}

double ring_bytes(Collective op, double bytes, int ranks) {
  return ring_steps(op, ranks) * bytes / ranks;
}

double collective_seconds(Collective op, double bytes, int pieces, int ranks, const Link& link) {
  const CollectiveRate& rate = link.rate(op);
  return ring_bytes(op, bytes, ranks) / rate.bandwidth +
         static_cast<double>(pieces) * ring_steps(op, ranks) * rate.latency_s;
}

}  // namespace llmft
