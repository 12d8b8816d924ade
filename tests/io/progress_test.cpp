// io/progress.h on a clock the test moves: what a batch log and a terminal receive, when,
// and with which figures (percent, counts, elapsed, the time left at the rate so far).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io/progress.h"

using namespace llmft::io;

namespace {

// A Progress writing into `lines` (each sink call one entry) on the clock `now`.
struct Recorded {
  std::vector<std::string> writes;
  double now = 100;  // seconds; any start works

  Progress make(ProgressMode mode, double interval_s, uint64_t total, ProgressCount count) {
    ProgressSettings settings;
    settings.mode = mode;
    settings.interval_s = interval_s;
    return Progress(
        "loading weights", total, std::move(count), settings,
        [this](const std::string& text) { writes.push_back(text); }, [this] { return now; });
  }
};

bool has_control_characters(const std::string& text) {
  for (const char c : text) {
    if (c != '\n' && static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("periodic progress prints nothing for an operation shorter than the interval") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::periodic, 10, 4, ProgressCount::items("stages"));
    for (uint64_t i = 1; i <= 4; ++i) {
      r.now += 2;  // 8 s in all
      p.update(i);
    }
  }
  CHECK(r.writes.empty());
}

TEST_CASE("periodic progress prints a plain line per interval with the time left, then done") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::periodic, 10, 1000, ProgressCount::items("units"));
    r.now += 5;
    p.update(100);  // 5 s: not yet due
    r.now += 7;
    p.update(250);  // 12 s: 25% at 12 s, so 36 s left at that rate
    r.now += 3;
    p.update(400);  // 15 s: 3 s since the last line, not due
    r.now += 10;
    p.update(1000);  // 25 s
    r.now += 1;
  }
  REQUIRE(r.writes.size() == 3);
  CHECK(r.writes[0] == "loading weights: 25% (250 of 1000 units), 12s, about 36s left\n");
  CHECK(r.writes[1] == "loading weights: 100% (1000 of 1000 units), 25s\n");
  CHECK(r.writes[2] == "loading weights: done, 1000 units in 26s\n");
  for (const std::string& line : r.writes) CHECK_FALSE(has_control_characters(line));
}

TEST_CASE("periodic progress with interval 0 prints each new percentage once") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::periodic, 0, 200, ProgressCount::items("units"));
    p.update(1);  // 0%
    p.update(1);  // unchanged
    p.update(2);  // 1%
    p.update(3);  // still 1%
  }
  REQUIRE(r.writes.size() == 3);
  CHECK(r.writes[0].find(": 0% (1 of 200 units)") != std::string::npos);
  CHECK(r.writes[1].find(": 1% (2 of 200 units)") != std::string::npos);
  CHECK(r.writes[2] == "loading weights: done, 3 units in 0s\n");
}

TEST_CASE("live progress rewrites one line in place and erases it at the end") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::live, 10, 3000000000ull, ProgressCount::parameters());
    p.update(1500000000ull);
    r.now += 0.5;
    p.update(1500000001ull);  // same percent, under a second: nothing new
    p.update(3000000000ull);
  }
  REQUIRE(r.writes.size() == 3);
  const std::string first = "loading weights: 50% (1.5B of 3B parameters), 0s";
  const std::string last = "loading weights: 100% (3B of 3B parameters), 1s";  // shorter
  CHECK(r.writes[0] == "\r" + first);
  // The shorter line blanks what is left of the longer one.
  CHECK(r.writes[1] == "\r" + last + std::string(first.size() - last.size(), ' '));
  // The widest line, blanked, and the cursor back at the start.
  CHECK(r.writes[2] == "\r" + std::string(first.size(), ' ') + "\r");
}

TEST_CASE("next_phase ends the last phase and counts a new total with its own time") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::periodic, 0, 100, ProgressCount::bytes());
    r.now += 20;
    p.update(100);
    p.next_phase("prepare: encoding", 2048);
    r.now += 4;
    p.update(1024);
  }
  REQUIRE(r.writes.size() == 5);
  CHECK(r.writes[0] == "loading weights: 100% (100 B of 100 B), 20s\n");
  CHECK(r.writes[1] == "loading weights: done, 100 B in 20s\n");
  CHECK(r.writes[2] == "prepare: encoding: 0% (0 B of 2.00 KiB), 0s\n");
  // The time left is the phase's: 4 s for half of it.
  CHECK(r.writes[3] == "prepare: encoding: 50% (1.00 KiB of 2.00 KiB), 4s, about 4s left\n");
  CHECK(r.writes[4] == "prepare: encoding: done, 1.00 KiB in 4s\n");
}

TEST_CASE("progress that is off writes nothing, and settings follow --quiet and the rank") {
  Recorded r;
  {
    Progress p = r.make(ProgressMode::off, 0, 10, ProgressCount::items("units"));
    p.update(5);
    p.update(10);
  }
  CHECK(r.writes.empty());
  CHECK(progress_settings_for(true, true, 10).mode == ProgressMode::off);
  CHECK(progress_settings_for(false, false, 10).mode == ProgressMode::off);
  CHECK(progress_settings_for(false, true, 3).interval_s == 3);
  CHECK(progress_settings_for(false, true, 3).mode != ProgressMode::off);
}
