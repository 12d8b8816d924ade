#include "comm/mpi_runtime.h"

#include <mpi.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "comm/mpi_gather_strings.h"
#include "core/error.h"

namespace llmft {

void check_mpi(int code, const char* expr, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(describe_call_failure(std::string("MPI error: ") + std::string(text, length), expr,
                                    file, line));
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  LLMFT_MPI_CHECK(MPI_Get_library_version(text, &length));
  // Its first line up to the first comma ("Open MPI v4.1.4, package: ..."; "MPICH
  // Version:\t4.0"), with runs of white space made one space.
  std::string library;
  for (int i = 0; i < length && text[i] != '\n' && text[i] != ','; ++i) {
    const bool space = std::isspace(static_cast<unsigned char>(text[i])) != 0;
    if (!space) {
      library += text[i];
    } else if (!library.empty() && library.back() != ' ') {
      library += ' ';
    }
  }
  while (!library.empty() && library.back() == ' ') library.pop_back();
  int major = 0, minor = 0;
  LLMFT_MPI_CHECK(MPI_Get_version(&major, &minor));
  return library + ", MPI " + std::to_string(major) + "." + std::to_string(minor);
}

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  int provided = 0;
  LLMFT_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  LLMFT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  LLMFT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  LLMFT_MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_));
  MPI_Comm_set_errhandler(node_, MPI_ERRORS_RETURN);
  LLMFT_MPI_CHECK(MPI_Comm_rank(node_, &local_rank_));
  LLMFT_MPI_CHECK(MPI_Comm_size(node_, &local_size_));
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MPI_Comm_free(&node_);
  MPI_Finalize();
}

void MpiRuntime::node_barrier() const {
  LLMFT_MPI_CHECK(MPI_Barrier(node_));
}

std::vector<std::string> MpiRuntime::node_gather(const std::string& value) const {
  return mpi_gather_strings(node_, value);
}

void MpiRuntime::abort(int code) {
  if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
  // Not MPI_Finalize: it runs the clean-up other libraries hooked onto it (HDF5 closes
  // its files there), which a failure may have left unable to run.
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace llmft
