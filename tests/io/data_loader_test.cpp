#include "io/data_loader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/batch_cut.h"
#include "io/byte_tokenizer.h"
#include "io/prepare.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

using testing::TempDir;

// A token file whose token i is i, so every window is recognisable by its first input.
struct CountingTokenFile {
  TempDir dir;
  std::string path = dir.file("counting.tok");
  explicit CountingTokenFile(int tokens) {
    std::vector<int32_t> ids(tokens);
    for (int i = 0; i < tokens; ++i) ids[i] = i;
    write_token_file(path, ids, 65536);
  }
  TokenFile open() const { return TokenFile(path); }
};

// A token file written from explicit tokens and loss mask, removed at the end.
struct MaskedTokenFile {
  TempDir dir;
  std::string path = dir.file("masked.tok");
  MaskedTokenFile(const std::vector<int32_t>& tokens, const std::vector<uint8_t>& loss_mask) {
    write_token_file(path, tokens, 257, loss_mask);
  }
};

// The message of the Error that `make` throws, or "" when it throws none.
template <typename Make>
std::string error_of(Make make) {
  try {
    make();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The window index of each row of a batch drawn from a CountingTokenFile.
std::vector<int> windows_of(const Batch& batch) {
  std::vector<int> windows;
  for (int row = 0; row < batch.batch; ++row) {
    windows.push_back(batch.inputs[static_cast<size_t>(row) * batch.seq_len] / batch.seq_len);
  }
  return windows;
}

// The windows of step `step` of a global batch of `windows`, whole.
Batch step_batch(DataLoader& loader, int64_t step, int windows) {
  return loader.rows(loader.global_batch(step, windows), 0, windows);
}

TEST_CASE("windows are seq_len inputs and the same tokens shifted by one as targets") {
  CountingTokenFile tokens(101);
  const TokenFile file = tokens.open();
  DataLoader loader(file, 4, 1);
  CHECK(loader.num_windows() == 25);  // (101 - 1) / 4

  const Batch batch = step_batch(loader, 1, 3);
  CHECK(batch.batch == 3);
  CHECK(batch.seq_len == 4);
  REQUIRE(batch.inputs.size() == 12);
  REQUIRE(batch.targets.size() == 12);
  for (int row = 0; row < 3; ++row) {
    const int start = batch.inputs[row * 4];
    CHECK(start % 4 == 0);
    for (int t = 0; t < 4; ++t) {
      CHECK(batch.inputs[row * 4 + t] == start + t);
      CHECK(batch.targets[row * 4 + t] == start + t + 1);
    }
  }
}

TEST_CASE("the shuffled stream depends only on the seed") {
  CountingTokenFile tokens(1001);
  const TokenFile file = tokens.open();
  DataLoader a(file, 10, 42), b(file, 10, 42), other(file, 10, 43);
  std::vector<int> from_a, from_b, from_other;
  for (int step = 1; step <= 30; ++step) {  // 240 windows: more than two epochs of 100
    for (int w : windows_of(step_batch(a, step, 8))) from_a.push_back(w);
    for (int w : windows_of(step_batch(b, step, 8))) from_b.push_back(w);
    for (int w : windows_of(step_batch(other, step, 8))) from_other.push_back(w);
  }
  CHECK(from_a == from_b);
  CHECK(from_a != from_other);
  std::vector<int> in_file_order(100);
  for (int i = 0; i < 100; ++i) in_file_order[i] = i;
  CHECK(std::vector<int>(from_a.begin(), from_a.begin() + 100) != in_file_order);
}

TEST_CASE("the shuffle is pinned, so it cannot change with the standard library") {
  CountingTokenFile tokens(11);
  const TokenFile file = tokens.open();
  DataLoader loader(file, 1, 2024);
  // Recorded from this implementation; a change here changes every training run.
  const std::vector<int> first_epoch = windows_of(step_batch(loader, 1, 10));
  CHECK(first_epoch == std::vector<int>{9, 5, 8, 3, 0, 4, 7, 2, 6, 1});
}

TEST_CASE("a step's windows are a function of seed, global batch and step, in any order") {
  CountingTokenFile tokens(513);
  const TokenFile file = tokens.open();
  DataLoader walked(file, 8, 7);
  std::vector<std::vector<size_t>> steps;
  for (int step = 1; step <= 20; ++step) steps.push_back(walked.global_batch(step, 12));
  // A loader asked for step k first (a run started at step k) draws what the
  // uninterrupted run drew, backwards as well as forwards.
  DataLoader resumed(file, 8, 7);
  for (int step = 20; step >= 1; --step) CHECK(resumed.global_batch(step, 12) == steps[step - 1]);
  DataLoader jumping(file, 8, 7);
  for (int step : {13, 2, 20, 7, 7}) CHECK(jumping.global_batch(step, 12) == steps[step - 1]);
}

TEST_CASE("a stream continued at a position with another batch size reads the same windows") {
  CountingTokenFile tokens(513);
  const TokenFile file = tokens.open();
  DataLoader walked(file, 8, 7);
  std::vector<size_t> stream;  // 3 epochs of 64 windows, 12 at a time
  for (int step = 1; step <= 16; ++step) {
    const std::vector<size_t> batch = walked.global_batch(step, 12);
    stream.insert(stream.end(), batch.begin(), batch.end());
  }
  // A run that consumed 5 steps of 12 windows and resumes with batches of 7.
  DataLoader resumed(file, 8, 7);
  for (int64_t position = 60; position + 7 <= 192; position += 7) {
    const std::vector<size_t> batch = resumed.windows_at(position, 7);
    CHECK(std::equal(batch.begin(), batch.end(), stream.begin() + position));
  }
  CHECK_THROWS_AS(resumed.windows_at(-1, 7), Error);
  CHECK_THROWS_AS(resumed.windows_at(0, 0), Error);
}

TEST_CASE("every layout's cut reads each window of the global batch once") {
  CountingTokenFile tokens(513);
  const TokenFile file = tokens.open();
  DataLoader loader(file, 8, 7);
  for (const BatchCut cut : {BatchCut{12, 1, 1}, BatchCut{6, 2, 1}, BatchCut{1, 12, 1},
                             BatchCut{3, 1, 4}, BatchCut{1, 3, 4}, BatchCut{2, 3, 2}}) {
    CAPTURE(cut.micro_batch);
    CAPTURE(cut.grad_accum);
    CAPTURE(cut.dp);
    REQUIRE(cut.global_windows() == 12);
    for (int step = 1; step <= 20; ++step) {  // 20 * 12 windows: several epochs of 64
      const std::vector<size_t> windows = loader.global_batch(step, 12);
      const Batch global = loader.rows(windows, 0, 12);
      std::vector<int32_t> inputs(global.inputs.size()), targets(global.targets.size());
      std::vector<int> reads(12, 0);
      for (int m = 0; m < cut.grad_accum; ++m) {
        for (int rank = 0; rank < cut.dp; ++rank) {
          const int first = cut.first_window(m, rank);
          const Batch part = loader.rows(windows, first, cut.micro_batch);
          CHECK(part.batch == cut.micro_batch);
          std::copy(part.inputs.begin(), part.inputs.end(), inputs.begin() + first * 8);
          std::copy(part.targets.begin(), part.targets.end(), targets.begin() + first * 8);
          for (int w = first; w < first + cut.micro_batch; ++w) ++reads[w];
        }
      }
      CHECK(reads == std::vector<int>(12, 1));
      CHECK(inputs == global.inputs);
      CHECK(targets == global.targets);
    }
  }
  const std::vector<size_t> windows = loader.global_batch(1, 12);
  CHECK(loader.rows(windows, 5, 0).batch == 0);
  CHECK_THROWS_AS(loader.rows(windows, 10, 3), Error);
  CHECK_THROWS_AS(loader.global_batch(0, 12), Error);
}

TEST_CASE("every epoch visits every window once, in a new order") {
  CountingTokenFile tokens(301);
  const TokenFile file = tokens.open();
  DataLoader loader(file, 3, 5);
  REQUIRE(loader.num_windows() == 100);

  std::vector<int> stream;
  for (int step = 1; step <= 30; ++step) {  // 300 windows in batches of 10: three epochs
    for (int w : windows_of(step_batch(loader, step, 10))) stream.push_back(w);
    CHECK(loader.epoch_of((step - 1) * 10) == (step - 1) / 10);
  }
  std::vector<std::vector<int>> epochs;
  for (int e = 0; e < 3; ++e) {
    epochs.emplace_back(stream.begin() + 100 * e, stream.begin() + 100 * (e + 1));
    CHECK(std::set<int>(epochs[e].begin(), epochs[e].end()).size() == 100);
  }
  CHECK(epochs[0] != epochs[1]);
  CHECK(epochs[1] != epochs[2]);

  // A batch that straddles the end of an epoch takes the rest of it and then
  // starts the next one.
  DataLoader straddling(file, 3, 5);
  std::vector<int> straddled;
  for (int step = 1; step <= 43; ++step) {  // 301 windows in batches of 7
    for (int w : windows_of(step_batch(straddling, step, 7))) straddled.push_back(w);
  }
  CHECK(std::vector<int>(straddled.begin(), straddled.begin() + 300) == stream);
  CHECK(straddling.epoch_of(300) == 3);
  // A global batch larger than the data spans epochs within itself.
  DataLoader big(file, 3, 5);
  const std::vector<int> two_epochs = windows_of(step_batch(big, 1, 200));
  CHECK(two_epochs == std::vector<int>(stream.begin(), stream.begin() + 200));
}

TEST_CASE("a file too short for one window is an error naming it and what to do") {
  CountingTokenFile tokens(8);
  const TokenFile file = tokens.open();
  CHECK(DataLoader(file, 7, 0).num_windows() == 1);  // exactly seq_len + 1 tokens
  try {
    DataLoader loader(file, 8, 0);
    FAIL("expected an Error");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK(message.find(tokens.path) != std::string::npos);
    CHECK(message.find("8 tokens") != std::string::npos);
    CHECK(message.find("seq_len 8") != std::string::npos);
    CHECK(message.find("--seq-len") != std::string::npos);
  }
  CHECK_THROWS_AS(evaluation_batches(file, 8, 2, 10), Error);
}

TEST_CASE("evaluation batches are the first windows in file order") {
  CountingTokenFile tokens(101);
  const TokenFile file = tokens.open();
  const std::vector<Batch> batches = evaluation_batches(file, 4, 3, 7);
  REQUIRE(batches.size() == 3);
  CHECK(windows_of(batches[0]) == std::vector<int>{0, 1, 2});
  CHECK(windows_of(batches[1]) == std::vector<int>{3, 4, 5});
  CHECK(windows_of(batches[2]) == std::vector<int>{6});
  CHECK(batches[2].targets == std::vector<int32_t>{25, 26, 27, 28});

  const std::vector<Batch> all = evaluation_batches(file, 4, 10, 1000);
  REQUIRE(all.size() == 3);  // 25 windows
  CHECK(all[2].batch == 5);
}

TEST_CASE("prompt tokens are masked end to end: prepare, pack, then exactly those targets are -1") {
  TempDir dir;
  const std::string input = dir.write("instruct.jsonl",
                                      "{\"prompt\": \"Q1\", \"response\": \"ab\"}\n"
                                      "{\"prompt\": \"Q22\", \"response\": \"c\"}\n"
                                      "{\"text\": \"xy\"}\n");
  const std::string output = dir.file("instruct.tok");
  prepare_token_file(input, output, ByteTokenizer());
  // Samples: Q 1 a b EOT | Q 2 2 c EOT | x y EOT, each a window of its own at seq_len 4
  // (the first two cut to their first 4 tokens, the third padded with token 0).
  // Targets: 0 0 1 1 1   | 0 0 0 1 1   | 1 1 1
  const TokenFile file(output);
  const int32_t eot = ByteTokenizer::kEndOfText;
  const int32_t masked = kMaskedTarget;
  const std::vector<std::vector<int32_t>> inputs = {
      {'Q', '1', 'a', 'b'}, {'Q', '2', '2', 'c'}, {'x', 'y', eot, 0}};
  const std::vector<std::vector<int32_t>> targets = {
      {masked, 'a', 'b', eot},      // predicting "1" from "Q" is not trained on; the cut
                                    // sample's last kept token still predicts its next
      {masked, masked, 'c', eot},   // nor the second prompt
      {'y', eot, masked, masked}};  // a plain sample is trained on to its end, not past it

  const std::vector<Batch> batches = evaluation_batches(file, 4, 3, 10);
  REQUIRE(batches.size() == 1);
  REQUIRE(batches[0].batch == 3);
  for (size_t row = 0; row < 3; ++row) {
    CHECK(std::vector<int32_t>(batches[0].inputs.begin() + 4 * row,
                               batches[0].inputs.begin() + 4 * row + 4) == inputs[row]);
    CHECK(std::vector<int32_t>(batches[0].targets.begin() + 4 * row,
                               batches[0].targets.begin() + 4 * row + 4) == targets[row]);
  }

  DataLoader loader(file, 4, 3);
  const Batch shuffled = step_batch(loader, 1, 3);
  std::map<std::vector<int32_t>, std::vector<int32_t>> targets_by_inputs;
  for (size_t row = 0; row < 3; ++row) {
    targets_by_inputs[std::vector<int32_t>(shuffled.inputs.begin() + 4 * row,
                                           shuffled.inputs.begin() + 4 * row + 4)] =
        std::vector<int32_t>(shuffled.targets.begin() + 4 * row,
                             shuffled.targets.begin() + 4 * row + 4);
  }
  for (size_t row = 0; row < 3; ++row) CHECK(targets_by_inputs[inputs[row]] == targets[row]);
}

TEST_CASE("a window with every target masked is fine") {
  // Window 0 predicts tokens 1..4, all prompt; window 1 predicts 5..8, of which 8 is a target.
  const MaskedTokenFile tokens({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {0, 0, 0, 0, 0, 0, 0, 0, 1, 1});
  const TokenFile file(tokens.path);
  const std::vector<Batch> batches = evaluation_batches(file, 4, 2, 2);
  REQUIRE(batches.size() == 1);
  CHECK(batches[0].targets == std::vector<int32_t>{-1, -1, -1, -1, -1, -1, -1, 9});
  DataLoader loader(file, 4, 0);
  CHECK(loader.num_windows() == 2);
}

TEST_CASE("a file without any training target in its windows is an error naming it") {
  const MaskedTokenFile none({1, 2, 3, 4, 5}, {0, 0, 0, 0, 0});
  const TokenFile file(none.path);
  std::string message = error_of([&] { DataLoader(file, 2, 0); });
  CHECK(contains(message, none.path));
  CHECK(contains(message, "has no training target"));
  CHECK(contains(message, "llmft prepare"));
  CHECK(contains(error_of([&] { evaluation_batches(file, 2, 1, 1); }), "has no training target"));
}

TEST_CASE("targets only outside the windows are none: a shorter seq_len may reach them") {
  // Windows of 2 predict tokens 1..4; tokens 0 and 5 are the only targets.
  const MaskedTokenFile outside({1, 2, 3, 4, 5, 6}, {1, 0, 0, 0, 0, 1});
  const TokenFile file(outside.path);
  const std::string message = error_of([&] { DataLoader(file, 2, 0); });
  CHECK(contains(message, outside.path));
  CHECK(contains(message, "inside its windows of seq_len 2"));
  CHECK(contains(message, "--seq-len"));
  CHECK(DataLoader(file, 5, 0).num_windows() == 1);  // one window predicting tokens 1..5
}

}  // namespace
}  // namespace llmft::io
