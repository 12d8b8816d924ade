#include "comm/mpi_lead_decision.h"

#include <mpi.h>

#include <array>
#include <memory>
#include <utility>

#include "comm/mpi_request.h"
#include "core/error.h"

namespace llmft {
namespace {

// Broadcasts `count` items of `buffer` from rank 0, waiting at most `timeout`. A broadcast
// that timed out may still write its buffer: it is left to MPI then, not freed under it.
template <typename T>
void broadcast(std::unique_ptr<T>& buffer, void* data, int count, MPI_Datatype type,
               double timeout) {
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Ibcast(data, count, type, 0, MPI_COMM_WORLD, &request) == MPI_SUCCESS,
                "MPI_Ibcast failed while sharing rank 0's decision");
  try {
    MpiRequest(request, "sharing rank 0's decision", timeout).wait();
  } catch (...) {
    buffer.release();
    throw;
  }
}

}  // namespace

std::string decided_on_lead(bool lead, const std::function<std::string()>& work,
                            double timeout_seconds) {
  int ok = 1;
  std::string text;
  if (lead) {
    try {
      text = work();
    } catch (const std::exception& e) {
      ok = 0;
      text = e.what();
    }
  }
  auto header =
      std::make_unique<std::array<int, 2>>(std::array<int, 2>{ok, static_cast<int>(text.size())});
  broadcast(header, header->data(), 2, MPI_INT, timeout_seconds);
  auto shared = std::make_unique<std::string>(std::move(text));
  shared->resize(static_cast<size_t>((*header)[1]));
  broadcast(shared, shared->data(), (*header)[1], MPI_CHAR, timeout_seconds);
  if ((*header)[0] == 0) throw Error(*shared);
  return *shared;
}

}  // namespace llmft
