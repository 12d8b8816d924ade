#include "comm/mpi_node_order.h"

#include <mpi.h>

#include <algorithm>
#include <numeric>

#include "comm/mpi_gather_strings.h"
#include "comm/mpi_runtime.h"

namespace llmft {

int NodeOrder::node_count() const {
  return node_of.empty() ? 0 : *std::max_element(node_of.begin(), node_of.end()) + 1;
}

bool NodeOrder::is_rank_order() const {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != static_cast<int>(i)) return false;
  }
  return true;
}

std::string NodeOrder::groups_text(int group_size) const {
  std::string text;
  for (size_t first = 0; first < ranks.size(); first += static_cast<size_t>(group_size)) {
    std::string members, on;
    int last_node = -1;
    for (size_t i = first; i < std::min(ranks.size(), first + group_size); ++i) {
      const int rank = ranks[i];
      members += (members.empty() ? "" : ",") + std::to_string(rank);
      if (node_of[rank] != last_node) {
        on += (on.empty() ? "" : ",") +
              (hosts.empty() ? "node " + std::to_string(node_of[rank]) : hosts[rank]);
        last_node = node_of[rank];
      }
    }
    text += (text.empty() ? "ranks " : "; ranks ") + members + " on " + on;
  }
  return text;
}

NodeOrder node_order_from_leaders(const std::vector<int>& leaders, int rank) {
  NodeOrder order;
  order.ranks.resize(leaders.size());
  std::iota(order.ranks.begin(), order.ranks.end(), 0);
  std::stable_sort(order.ranks.begin(), order.ranks.end(),
                   [&](int a, int b) { return leaders[a] < leaders[b]; });
  order.node_of.assign(leaders.size(), 0);
  int node = -1;
  for (size_t i = 0; i < order.ranks.size(); ++i) {
    const int r = order.ranks[i];
    if (i == 0 || leaders[r] != leaders[order.ranks[i - 1]]) ++node;
    order.node_of[r] = node;
    if (r == rank) order.place = static_cast<int>(i);
  }
  return order;
}

NodeOrder mpi_node_order() {
  int rank = 0, size = 1;
  LLMFT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  LLMFT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_Comm node = MPI_COMM_NULL;
  LLMFT_MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int leader = rank;
  const int reduced = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  LLMFT_MPI_CHECK(reduced);
  std::vector<int> leaders(static_cast<size_t>(size));
  LLMFT_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD));
  NodeOrder order = node_order_from_leaders(leaders, rank);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  LLMFT_MPI_CHECK(MPI_Get_processor_name(name, &length));
  order.hosts = mpi_gather_strings(MPI_COMM_WORLD, std::string(name, length));
  return order;
}

}  // namespace llmft
