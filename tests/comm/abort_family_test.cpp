// AbortFamily: an abort of one communicator sharing resources marks, aborts and names
// every member still joined, once, and leaves departed members alone.
#include "comm/abort_family.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace llmft;

namespace {

// A family of the world and two groups split from it, recording the order of the aborts.
struct WorldAndSplits {
  AbortFamily family;
  std::vector<std::string> aborted_in_order;
  AbortFamily::Member world = join("world");
  AbortFamily::Member data_parallel = join("world/split1:0");
  AbortFamily::Member tensor_parallel = join("world/split2:0");

  AbortFamily::Member join(const std::string& group) {
    return family.join(group, [this, group] { aborted_in_order.push_back(group); });
  }
};

}  // namespace

TEST_CASE("a member of no aborted family is usable and says nothing") {
  WorldAndSplits f;
  CHECK_FALSE(f.family.aborted(f.data_parallel));
  CHECK(f.family.why_aborted(f.data_parallel).empty());
  CHECK(f.aborted_in_order.empty());
}

TEST_CASE("aborting one group aborts every group sharing its resources, the failed one first") {
  WorldAndSplits f;
  f.family.abort(f.tensor_parallel, "the all_reduce timed out");
  CHECK(f.aborted_in_order ==
        std::vector<std::string>{"world/split2:0", "world", "world/split1:0"});
  for (AbortFamily::Member m : {f.world, f.data_parallel, f.tensor_parallel}) {
    CHECK(f.family.aborted(m));
  }
  CHECK(f.family.why_aborted(f.tensor_parallel) ==
        "group world/split2:0 was aborted: the all_reduce timed out (groups aborted together: "
        "world/split2:0 world world/split1:0)");
  CHECK(f.family.why_aborted(f.data_parallel) ==
        "group world/split1:0 was aborted with group world/split2:0, whose resources it shares: "
        "the all_reduce timed out (groups aborted together: world/split2:0 world "
        "world/split1:0)");
}

TEST_CASE("a second abort neither runs an action again nor replaces the first cause") {
  WorldAndSplits f;
  f.family.abort(f.data_parallel, "first");
  f.family.abort(f.world, "second");
  f.family.abort(f.data_parallel, "third");
  CHECK(f.aborted_in_order.size() == 3);
  CHECK(f.family.why_aborted(f.world).find("with group world/split1:0") != std::string::npos);
  CHECK(f.family.why_aborted(f.world).find(": first") != std::string::npos);
}

TEST_CASE("a member that left is neither aborted nor named, and cannot start an abort") {
  WorldAndSplits f;
  f.family.leave(f.world);
  f.family.abort(f.world, "after leaving");
  CHECK(f.aborted_in_order.empty());
  f.family.abort(f.data_parallel, "the peer failed");
  CHECK(f.aborted_in_order == std::vector<std::string>{"world/split1:0", "world/split2:0"});
  CHECK_FALSE(f.family.aborted(f.world));
  CHECK(f.family.why_aborted(f.tensor_parallel).find(" world ") == std::string::npos);
}

TEST_CASE("an action that aborts again finds its family already down") {
  AbortFamily family;
  int calls = 0;
  AbortFamily::Member parent = family.join("world", [&] { ++calls; });
  AbortFamily::Member child = 0;
  child = family.join("world/split1:1", [&] {
    ++calls;
    family.abort(child, "again, from inside an action");
  });
  family.abort(parent, "the first failure");
  CHECK(calls == 2);
  CHECK(family.why_aborted(child).find("the first failure") != std::string::npos);
}

TEST_CASE("an unknown member is an internal error") {
  AbortFamily family;
  CHECK_THROWS_WITH(family.aborted(3), "internal: no member 3 in the abort family");
}
