#include "comm/rank_agreement.h"

#include <mpi.h>

#include <cstdint>
#include <sstream>

#include "comm/mpi_gather_strings.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"

namespace llmft {
namespace {

constexpr int kRanksListed = 4;

uint64_t fnv1a(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

[[noreturn]] void fail_on(const std::string& name, const std::vector<std::string>& values) {
  std::ostringstream message;
  message << "the ranks do not agree on " << name << ": rank 0 has \"" << values[0] << "\"";
  int listed = 0, unlisted = 0;
  for (size_t r = 1; r < values.size(); ++r) {
    if (values[r] == values[0]) continue;
    if (listed++ < kRanksListed) {
      message << ", rank " << r << " has \"" << values[r] << "\"";
    } else {
      ++unlisted;
    }
  }
  if (unlisted > 0) message << " (and " << unlisted << " more ranks differ)";
  message << "; start every rank with the same llmft command, model and data";
  throw Error(message.str());
}

}  // namespace

void require_ranks_agree(const std::vector<Setting>& settings) {
  int ranks = 1;
  LLMFT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  if (ranks == 1) return;
  // Equal counts first, so that the hashes' all-gather has one shape on every rank.
  const int count = static_cast<int>(settings.size());
  std::vector<int> counts(ranks);
  LLMFT_MPI_CHECK(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD));
  for (int r = 1; r < ranks; ++r) {
    if (counts[r] != counts[0]) {
      std::vector<std::string> described;
      for (int c : counts) described.push_back(std::to_string(c) + " settings");
      fail_on("the command they run", described);
    }
  }
  std::vector<uint64_t> mine;
  for (const Setting& s : settings) mine.push_back(fnv1a(s.value, fnv1a(s.name)));
  std::vector<uint64_t> all(mine.size() * ranks);
  LLMFT_MPI_CHECK(MPI_Allgather(mine.data(), count, MPI_UINT64_T, all.data(), count, MPI_UINT64_T,
                                MPI_COMM_WORLD));
  for (int i = 0; i < count; ++i) {
    for (int r = 1; r < ranks; ++r) {
      if (all[r * count + i] != all[i]) {
        fail_on(settings[i].name, mpi_gather_strings(MPI_COMM_WORLD, settings[i].value));
      }
    }
  }
}

}  // namespace llmft
