// MpiRuntime: MPI's lifetime for one process (MPI_Init_thread .. MPI_Finalize), the
// world rank and size, and aborting the whole job when this rank fails.
// Construct exactly one, first thing in main().
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace llmft {

// Throws llmft::Error describing a failed MPI call.
void check_mpi(int code, const char* expr, const char* file, int line);
#define LLMFT_MPI_CHECK(call) ::llmft::check_mpi((call), #call, __FILE__, __LINE__)

// The MPI library and the standard it implements, e.g. "Open MPI v4.1.4, MPI 3.1": the
// first part of MPI_Get_library_version's text (callable before MPI_Init).
std::string mpi_library_version();

class MpiRuntime {
 public:
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank among the ranks of its node (those sharing memory with it), and their number.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Waits until every rank of this node has called it.
  void node_barrier() const;
  // Every rank of this node's `value`, in local-rank order. Collective over the node.
  std::vector<std::string> node_gather(const std::string& value) const;
  // Ends every rank of the job with `code` (MPI_Abort); with one rank, an immediate exit
  // (stdio flushed, no MPI_Finalize).
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace llmft
