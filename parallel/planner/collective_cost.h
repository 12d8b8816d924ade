// The time of a collective under the ring algorithms (Patarasuk and Yuan 2009): over n ranks an
// all-reduce of B bytes sends 2(n-1)/n x B per rank in 2(n-1) steps, a reduce-scatter or
// an all-gather (n-1)/n x B in n-1 steps (a pipelined broadcast likewise), and every step
// pays the link's latency.
#pragma once

#include "comm/communicator.h"
#include "parallel/planner/device.h"

namespace llmft {

// The steps of the ring, each paying the link's latency: 2(n-1) for an all-reduce, n-1
// for the others.
int ring_steps(Collective op, int ranks);

// Bytes each rank sends for a collective over `bytes` (the full buffer).
double ring_bytes(Collective op, double bytes, int ranks);

// Seconds for `pieces` collectives that together cover `bytes` (e.g. one per unit):
// the ring bytes over the link's bandwidth for `op` plus every piece's steps of its latency.
// REQUIRES: ranks >= 1, pieces >= 1, link.rate(op).bandwidth > 0
double collective_seconds(Collective op, double bytes, int pieces, int ranks, const Link& link);

}  // namespace llmft
