#include "launch/cpu_share.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "comm/mpi_runtime.h"
#include "core/error.h"

namespace llmft {
namespace {

std::string joined(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

std::vector<int> split(const std::string& text) {
  std::vector<int> cpus;
  std::istringstream in(text);
  for (std::string cpu; std::getline(in, cpu, ',');) cpus.push_back(std::stoi(cpu));
  return cpus;
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  LLMFT_REQUIRE(sched_getaffinity(0, sizeof(mask), &mask) == 0,
                "cannot read this process's CPU affinity; pass --threads N");
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return cpus;
}

int cpu_share(const std::vector<std::vector<int>>& masks, size_t me) {
  std::map<int, int> holders;  // CPU -> the ranks that may run on it
  for (const std::vector<int>& mask : masks) {
    for (int cpu : mask) ++holders[cpu];
  }
  double share = 0;
  for (int cpu : masks[me]) share += 1.0 / holders[cpu];
  // A CPU split evenly adds exact binary fractions only for 2^k ranks: a little slack
  // keeps 3 x (1/3) from rounding down to 0.
  return std::max(1, static_cast<int>(share + 1e-9));
}

int default_threads(const MpiRuntime& mpi) {
  const char* user = std::getenv("OMP_NUM_THREADS");
  const bool user_set = user != nullptr && *user != '\0';
  // Every rank of the node takes part, also one whose user set the variable.
  const std::vector<std::string> gathered = mpi.node_gather(joined(allowed_cpus()));
  // The user's count: the first of a list for nested teams ("4,2"); 0 (OpenMP's
  // choice) where it is no count.
  if (user_set) return std::max(0, std::atoi(user));
  std::vector<std::vector<int>> masks;
  for (const std::string& text : gathered) masks.push_back(split(text));
  return cpu_share(masks, static_cast<size_t>(mpi.local_rank()));
}

}  // namespace llmft
