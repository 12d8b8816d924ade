// The ranks node by node (comm/mpi_node_order.h), the order the dp x tp mesh is laid over
// so that tensor-parallel groups stay within a node; the two-host runs of
// tests/cluster/multinode_losses.sh check it with real nodes.
#include <doctest/doctest.h>

#include <vector>

#include "comm/mpi_node_order.h"

using namespace llmft;

TEST_CASE("node order: nodes filled one after another keep the ranks' own order") {
  const NodeOrder order = node_order_from_leaders({0, 0, 2, 2}, 3);
  CHECK(order.ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(order.node_of == std::vector<int>{0, 0, 1, 1});
  CHECK(order.place == 3);
  CHECK(order.node_count() == 2);
  CHECK(order.is_rank_order());
  CHECK(order.groups_text(2) == "ranks 0,1 on node 0; ranks 2,3 on node 1");
}

TEST_CASE("node order: ranks dealt round-robin over nodes are taken node by node") {
  // mpirun --map-by node on two nodes: even ranks on the first, odd on the second.
  NodeOrder order = node_order_from_leaders({0, 1, 0, 1}, 2);
  CHECK(order.ranks == std::vector<int>{0, 2, 1, 3});
  CHECK(order.node_of == std::vector<int>{0, 1, 0, 1});
  CHECK(order.place == 1);
  CHECK_FALSE(order.is_rank_order());
  order.hosts = {"a", "b", "a", "b"};
  CHECK(order.groups_text(2) == "ranks 0,2 on a; ranks 1,3 on b");
  // Groups larger than a node cross nodes, and say so.
  CHECK(order.groups_text(4) == "ranks 0,2,1,3 on a,b");
}

TEST_CASE("node order: nodes keep the order of their lowest rank, whatever their sizes") {
  // Three nodes: {0, 3}, {1, 4} and {2}.
  const NodeOrder order = node_order_from_leaders({0, 1, 2, 0, 1}, 4);
  CHECK(order.ranks == std::vector<int>{0, 3, 1, 4, 2});
  CHECK(order.node_of == std::vector<int>{0, 1, 2, 0, 1});
  CHECK(order.place == 3);
  CHECK(order.node_count() == 3);
  CHECK(node_order_from_leaders({0}, 0).is_rank_order());
}
