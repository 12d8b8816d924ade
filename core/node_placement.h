// Where a rank runs among the ranks of its node: what a backend needs to pick its device
// (one GPU per rank) or its share of the machine.
#pragma once

#include <functional>

namespace llmft {

struct NodePlacement {
  int local_rank = 0;
  int local_ranks = 1;
  bool share_devices = false;  // several ranks may use one GPU
  // Waits for every rank of the node; the launcher sets it when ranks share devices, and
  // then every rank of the node calls it the same number of times.
  std::function<void()> node_barrier;
};

}  // namespace llmft
