// Samples packed into windows (io/window_layout.h), against layouts worked out by hand:
// next fit in file order, positions restarting at every sample, each sample's last
// target masked, padding, truncation that keeps a sample's start, dropped samples, and
// the token file's sample starts surviving a write and a read.
#include "io/window_layout.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "io/data_loader.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

using testing::TempDir;

// A token file of samples: sample i holds lengths[i] tokens, token j of the file is
// 100 + j, and `prompt[i]` leading tokens of sample i are not training targets.
struct SampleFile {
  TempDir dir;
  std::string path = dir.file("samples.tok");
  SampleFile(const std::vector<size_t>& lengths, const std::vector<size_t>& prompt) {
    std::vector<int32_t> tokens;
    std::vector<uint8_t> mask;
    std::vector<uint64_t> starts;
    for (size_t i = 0; i < lengths.size(); ++i) {
      starts.push_back(tokens.size());
      for (size_t j = 0; j < lengths[i]; ++j) {
        tokens.push_back(static_cast<int32_t>(100 + tokens.size()));
        mask.push_back(j < prompt[i] ? 0 : 1);
      }
    }
    write_token_file(path, tokens, 1000, mask, starts);
  }
};

constexpr int32_t M = kMaskedTarget;

}  // namespace

TEST_CASE("samples are packed whole, next fit, each with its own positions") {
  // Samples of 3, 4, 2 and 5 tokens (file tokens 100..113) into windows of 8: [3 4] (1
  // padding), [2 5] (1 padding). Sample 1's first token is a prompt token.
  SampleFile f({3, 4, 2, 5}, {0, 1, 0, 0});
  const TokenFile file(f.path);
  REQUIRE(file.sample_starts() == std::vector<uint64_t>{0, 3, 7, 9});
  const WindowLayout layout(file, 8);
  CHECK(layout.packed());
  CHECK(layout.num_windows() == 2);
  CHECK(layout.packing().samples == 4);
  CHECK(layout.packing().truncated == 0);
  CHECK(layout.packing().dropped == 0);
  CHECK(layout.packing().padding == 2);
  Batch batch = layout.empty_batch(2);
  layout.fill_row(0, 0, batch);
  layout.fill_row(1, 1, batch);
  CHECK(batch.inputs == std::vector<int32_t>{100, 101, 102, 103, 104, 105, 106, 0,  //
                                             107, 108, 109, 110, 111, 112, 113, 0});
  // Token 103 (sample 1's first) is a prompt token, so nothing predicts it.
  CHECK(batch.targets == std::vector<int32_t>{101, 102, M, 104, 105, 106, M, M,  //
                                              108, M, 110, 111, 112, 113, M, M});
  CHECK(batch.positions == std::vector<int32_t>{0, 1, 2, 0, 1, 2, 3, 0,  //
                                                0, 1, 0, 1, 2, 3, 4, 0});
  const std::vector<Batch> batches{batch};
  const std::vector<MicroBatch> views = micro_batch_views(batches);
  CHECK(views[0].positions == batches[0].positions.data());
}

TEST_CASE("a sample longer than the window keeps its start; one with no target is dropped") {
  // Sample 0: 10 tokens, its first 2 a prompt: truncated to 6, the last kept token's
  // target still its sample's next token. Sample 1: a prompt alone (dropped). Sample 2:
  // a prompt of 7 tokens then a response, past the window: nothing trainable kept
  // (dropped). Sample 3: 2 tokens.
  SampleFile f({10, 3, 9, 2}, {2, 3, 7, 0});
  const TokenFile file(f.path);
  const WindowLayout layout(file, 6);
  CHECK(layout.num_windows() == 2);
  CHECK(layout.packing().truncated == 1);
  CHECK(layout.packing().dropped == 2);
  Batch batch = layout.empty_batch(2);
  layout.fill_row(0, 0, batch);
  layout.fill_row(1, 1, batch);
  CHECK(batch.inputs == std::vector<int32_t>{100, 101, 102, 103, 104, 105,  //
                                             122, 123, 0, 0, 0, 0});
  CHECK(batch.targets == std::vector<int32_t>{M, 102, 103, 104, 105, 106,  //
                                              123, M, M, M, M, M});
  CHECK(batch.positions == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 0, 1, 0, 1, 2, 3});
}

TEST_CASE("a file whose every sample is dropped is an error naming it") {
  SampleFile f({4, 4}, {4, 4});
  const TokenFile file(f.path);
  try {
    WindowLayout layout(file, 8);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(f.path) != std::string::npos);
    CHECK(std::string(e.what()).find("none with a training target") != std::string::npos);
  }
}

TEST_CASE("sample starts that are not 0 first and rising are refused on write") {
  TempDir dir;
  const std::string path = dir.file("bad.tok");
  CHECK_THROWS_AS(write_token_file(path, {1, 2, 3}, 10, {}, {1}), Error);
  CHECK_THROWS_AS(write_token_file(path, {1, 2, 3}, 10, {}, {0, 2, 2}), Error);
  CHECK_THROWS_AS(write_token_file(path, {1, 2, 3}, 10, {}, {0, 3}), Error);
  write_token_file(path, {1, 2, 3}, 10, {}, {0, 2});
  CHECK(TokenFile(path).sample_starts() == std::vector<uint64_t>{0, 2});
  CHECK(!TokenFile(path).has_loss_mask());
}

}  // namespace llmft::io
