// Where MPI puts each rank, for the multi-node tests (tests/cluster/multinode_losses.sh):
// rank 0 prints one line per rank, in rank order,
//   rank R: processor HOST, node rank L of N
// with HOST from MPI_Get_processor_name and L, N the rank's place among the ranks that
// share memory with it (MPI_COMM_TYPE_SHARED, which llmft's MpiRuntime takes for a node).
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  std::vector<int> places(static_cast<size_t>(size) * 2);
  const int place[2] = {node_rank, node_size};
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
             0, MPI_COMM_WORLD);
  MPI_Gather(place, 2, MPI_INT, places.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      std::printf("rank %d: processor %s, node rank %d of %d\n", r,
                  &names[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME], places[2 * r],
                  places[2 * r + 1]);
    }
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
