#include "comm/mpi_lead_decision.h"

#include <mpi.h>

#include "comm/mpi_request.h"
#include "core/error.h"

namespace llmft {
namespace {

void broadcast(void* data, int count, MPI_Datatype type, const char* what, double timeout) {
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Ibcast(data, count, type, 0, MPI_COMM_WORLD, &request) == MPI_SUCCESS,
                "MPI_Ibcast failed while sharing " << what);
  MpiRequest(request, std::string("sharing ") + what + " from rank 0", timeout).wait();
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
  int header[2] = {ok, static_cast<int>(text.size())};
  broadcast(header, 2, MPI_INT, "rank 0's decision", timeout_seconds);
  text.resize(static_cast<size_t>(header[1]));
  broadcast(text.data(), header[1], MPI_CHAR, "rank 0's decision", timeout_seconds);
  if (header[0] == 0) throw Error(text);
  return text;
}

}  // namespace llmft
