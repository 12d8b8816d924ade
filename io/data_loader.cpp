#include "io/data_loader.h"

#include <algorithm>
#include <random>
#include <utility>

#include "core/error.h"

namespace llmft::io {
namespace {

// (size - 1) / seq_len, or an Error when that is 0.
size_t count_windows(const TokenFile& file, int seq_len) {
  LLMFT_REQUIRE(seq_len > 0, "seq_len must be positive, got " << seq_len);
  const size_t windows = file.size() == 0 ? 0 : (file.size() - 1) / seq_len;
  LLMFT_REQUIRE(windows > 0, "token file '" << file.path() << "' has " << file.size()
                                            << " tokens, too few for one training window of "
                                               "seq_len "
                                            << seq_len << " (which needs " << seq_len + 1
                                            << "); use a shorter --seq-len or more data");
  return windows;
}

// Throws naming the file when none of the targets of its `windows` windows of seq_len,
// tokens [1, windows * seq_len + 1), is a training target. Counts the targets outside
// that range (at most seq_len tokens), not the many inside it.
void require_training_targets(const TokenFile& file, size_t windows, int seq_len) {
  const size_t end = windows * seq_len + 1;
  std::vector<uint8_t> outside(file.size() - end);
  file.copy_loss_mask(end, outside.size(), outside.data());
  const size_t targets_outside = (file.is_target(0) ? 1 : 0) +
                                 static_cast<size_t>(std::count(outside.begin(), outside.end(), 1));
  if (file.target_count() > targets_outside) return;
  LLMFT_REQUIRE(file.target_count() > 0,
                "token file '" << file.path() << "' has no training target: its loss mask marks "
                               << "every token as a prompt token, so there is nothing to train "
                               << "on; give the dataset responses and re-run `llmft prepare`");
  LLMFT_FAIL("token file '" << file.path() << "' has no training target inside its windows of "
                            << "seq_len " << seq_len << " (tokens 1 to " << end - 1
                            << "): its loss mask marks them all as prompt tokens; use a shorter "
                            << "--seq-len or more data");
}

// splitmix64's finalizer: spreads every input bit over the whole output.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) without modulo bias: rejects the draws below 2^64 mod bound.
// REQUIRES: bound > 0.
uint64_t uniform_below(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  uint64_t draw = engine();
  while (draw < threshold) draw = engine();
  return draw % bound;
}

// Copies window `window` into row `row` of `batch`, masking the targets that are not
// training targets.
void fill_row(const TokenFile& file, size_t window, int row, Batch& batch) {
  const size_t seq_len = static_cast<size_t>(batch.seq_len);
  const size_t first_target = window * seq_len + 1;
  int32_t* targets = batch.targets.data() + row * seq_len;
  file.copy(window * seq_len, seq_len, batch.inputs.data() + row * seq_len);
  file.copy(first_target, seq_len, targets);
  if (!file.has_loss_mask()) return;
  std::vector<uint8_t> is_target(seq_len);
  file.copy_loss_mask(first_target, seq_len, is_target.data());
  for (size_t t = 0; t < seq_len; ++t) {
    if (is_target[t] == 0) targets[t] = kMaskedTarget;
  }
}

Batch empty_batch(int rows, int seq_len) {
  Batch batch;
  batch.batch = rows;
  batch.seq_len = seq_len;
  batch.inputs.resize(static_cast<size_t>(rows) * seq_len);
  batch.targets.resize(static_cast<size_t>(rows) * seq_len);
  return batch;
}

}  // namespace

DataLoader::DataLoader(const TokenFile& file, int seq_len, uint64_t seed)
    : file_(file), seq_len_(seq_len), seed_(seed), num_windows_(count_windows(file, seq_len)) {
  require_training_targets(file, num_windows_, seq_len);
}

const std::vector<size_t>& DataLoader::order_of(int64_t epoch) {
  if (epoch == cached_epoch_) return cached_order_;
  cached_order_.resize(num_windows_);
  for (size_t i = 0; i < num_windows_; ++i) cached_order_[i] = i;
  std::mt19937_64 engine(mix(seed_ ^ mix(static_cast<uint64_t>(epoch))));
  for (size_t i = num_windows_ - 1; i > 0; --i) {
    std::swap(cached_order_[i], cached_order_[uniform_below(engine, i + 1)]);
  }
  cached_epoch_ = epoch;
  return cached_order_;
}

int64_t DataLoader::epoch_of(int64_t position) const {
  return position / static_cast<int64_t>(num_windows_);
}

std::vector<size_t> DataLoader::global_batch(int64_t step, int global_windows) {
  LLMFT_REQUIRE(step >= 1 && global_windows > 0, "DataLoader::global_batch: step "
                                                     << step << " of " << global_windows
                                                     << " windows (both must be positive)");
  return windows_at((step - 1) * global_windows, global_windows);
}

std::vector<size_t> DataLoader::windows_at(int64_t first_position, int count) {
  LLMFT_REQUIRE(first_position >= 0 && count > 0,
                "DataLoader::windows_at: " << count << " windows from stream position "
                                           << first_position
                                           << " (a position >= 0 and a positive count)");
  std::vector<size_t> windows;
  const int64_t per_epoch = static_cast<int64_t>(num_windows_);
  for (int64_t position = first_position; position < first_position + count; ++position) {
    windows.push_back(order_of(epoch_of(position))[position % per_epoch]);
  }
  return windows;
}

Batch DataLoader::rows(const std::vector<size_t>& windows, int first, int count) const {
  LLMFT_REQUIRE(first >= 0 && count >= 0 && first + count <= static_cast<int>(windows.size()),
                "DataLoader::rows: windows [" << first << ", " << first + count
                                              << ") are not inside a global batch of "
                                              << windows.size());
  Batch batch = empty_batch(count, seq_len_);
  for (int row = 0; row < count; ++row) fill_row(file_, windows[first + row], row, batch);
  return batch;
}

std::vector<Batch> evaluation_batches(const TokenFile& file, int seq_len, int micro_batch,
                                      int max_windows) {
  LLMFT_REQUIRE(micro_batch > 0 && max_windows > 0, "evaluation_batches: micro_batch ("
                                                        << micro_batch << ") and max_windows ("
                                                        << max_windows << ") must be positive");
  const size_t file_windows = count_windows(file, seq_len);
  require_training_targets(file, file_windows, seq_len);
  const size_t windows = std::min(file_windows, static_cast<size_t>(max_windows));
  std::vector<Batch> batches;
  for (size_t begin = 0; begin < windows; begin += micro_batch) {
    const int rows = static_cast<int>(std::min<size_t>(micro_batch, windows - begin));
    Batch batch = empty_batch(rows, seq_len);
    for (int row = 0; row < rows; ++row) fill_row(file, begin + row, row, batch);
    batches.push_back(std::move(batch));
  }
  return batches;
}

}  // namespace llmft::io
