// --threads 0: a rank's share of the CPUs it may run on, divided with the ranks of its node
// that may run on them too (launch/cpu_share.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "launch/cpu_share.h"

using namespace llmft;

namespace {

std::vector<int> cpus(int first, int count) {
  std::vector<int> mask(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) mask[static_cast<size_t>(i)] = first + i;
  return mask;
}

}  // namespace

TEST_CASE("cpu share: ranks on the same CPUs divide them; ranks bound apart keep theirs") {
  CHECK(cpu_share({cpus(0, 8)}, 0) == 8);  // one rank: every CPU
  const std::vector<std::vector<int>> four_on_eight(4, cpus(0, 8));
  for (size_t r = 0; r < 4; ++r) CHECK(cpu_share(four_on_eight, r) == 2);
  CHECK(cpu_share({cpus(0, 4), cpus(4, 4)}, 1) == 4);  // bound to a socket each
  // Overlapping masks: two CPUs of its own and half of two shared ones.
  CHECK(cpu_share({cpus(0, 4), cpus(2, 4)}, 0) == 3);
  CHECK(cpu_share({cpus(0, 4), cpus(2, 4)}, 1) == 3);
  // Three ranks on three CPUs take one each, though 3 x (1/3) is not exact in binary.
  const std::vector<std::vector<int>> three_on_three(3, cpus(0, 3));
  for (size_t r = 0; r < 3; ++r) CHECK(cpu_share(three_on_three, r) == 1);
  // More ranks than CPUs: one thread each, never none.
  CHECK(cpu_share(std::vector<std::vector<int>>(8, cpus(0, 2)), 5) == 1);
  CHECK(cpu_share({cpus(0, 4), cpus(0, 4), cpus(0, 4)}, 2) == 1);  // 4/3
}

TEST_CASE("cpu share: this process's CPUs are some of the machine's, ascending") {
  const std::vector<int> mine = allowed_cpus();
  REQUIRE(!mine.empty());
  CHECK(std::is_sorted(mine.begin(), mine.end()));
  CHECK(std::adjacent_find(mine.begin(), mine.end()) == mine.end());
  CHECK(mine.size() <= std::max(1u, std::thread::hardware_concurrency()));
}
