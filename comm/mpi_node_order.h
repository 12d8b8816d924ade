// The ranks of a job listed node by node: the nodes (the ranks that share memory,
// MPI_COMM_TYPE_SHARED, as MpiRuntime takes them) in the order of their lowest rank, each
// node's ranks in rank order. A dp x tp mesh laid over this order keeps each
// tensor-parallel group (consecutive places) within a node whatever order the launcher
// dealt the ranks in (mpirun --map-by node, srun --distribution=cyclic), wherever each
// node's ranks are a multiple of tp.
#pragma once

#include <string>
#include <vector>

namespace llmft {

struct NodeOrder {
  std::vector<int> ranks;          // the world ranks, node by node
  std::vector<int> node_of;        // each world rank's node, numbered in that order
  std::vector<std::string> hosts;  // each world rank's processor name (empty: unknown)
  int place = 0;                   // this rank's index in `ranks`

  int node_count() const;
  // Whether the order is the ranks' own (the launcher filled one node after another).
  bool is_rank_order() const;
  // The groups of `group_size` consecutive places with their ranks and hosts, e.g.
  // "ranks 0,1 on a; ranks 2,3 on b" (a group across nodes: "ranks 0,1 on a,b").
  std::string groups_text(int group_size) const;
};

// The order for `rank`, from each world rank's node leader (the lowest rank of its node).
NodeOrder node_order_from_leaders(const std::vector<int>& leaders, int rank);

// This job's order, with the hosts. Collective over MPI_COMM_WORLD.
NodeOrder mpi_node_order();

}  // namespace llmft
