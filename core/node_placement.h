// Where a rank runs among the ranks of its node: what a backend needs to pick its device
// (one GPU per rank) or its share of the machine.
#pragma once

namespace llmft {

struct NodePlacement {
  int local_rank = 0;
  int local_ranks = 1;
  bool share_devices = false;  // several ranks may use one GPU
};

}  // namespace llmft
