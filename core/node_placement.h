// Where a rank runs among the ranks of its node: what a backend needs to pick its device
// (one GPU per rank) or its share of the machine.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmft {

struct NodePlacement {
  int local_rank = 0;
  int local_ranks = 1;
  bool share_devices = false;  // several ranks may use one GPU
  // Waits for every rank of the node; the launcher sets it when ranks share devices, and
  // then every rank of the node calls it the same number of times.
  std::function<void()> node_barrier;
  // Every rank of the node's `value`, in local-rank order; the launcher sets it when the
  // node runs several ranks, and then every rank of the node calls it once.
  std::function<std::vector<std::string>(const std::string& value)> node_gather;
};

}  // namespace llmft
