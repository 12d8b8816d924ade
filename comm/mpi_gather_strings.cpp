#include "comm/mpi_gather_strings.h"

#include "comm/mpi_runtime.h"

namespace llmft {

std::vector<std::string> mpi_gather_strings(MPI_Comm comm, const std::string& value) {
  int size = 1;
  LLMFT_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int length = static_cast<int>(value.size());
  std::vector<int> lengths(static_cast<size_t>(size)), offsets(lengths.size());
  LLMFT_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  int total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<size_t>(total), '\0');
  LLMFT_MPI_CHECK(MPI_Allgatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(),
                                 offsets.data(), MPI_CHAR, comm));
  std::vector<std::string> values;
  for (size_t r = 0; r < lengths.size(); ++r) values.push_back(all.substr(offsets[r], lengths[r]));
  return values;
}

}  // namespace llmft
