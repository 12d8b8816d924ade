#include "io/data_loader.h"

#include <algorithm>
#include <random>
#include <utility>

#include "core/error.h"

namespace llmft::io {
namespace {

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

}  // namespace

DataLoader::DataLoader(const TokenFile& file, int seq_len, uint64_t seed)
    : layout_(file, seq_len), seed_(seed), num_windows_(layout_.num_windows()) {}

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
  Batch batch = layout_.empty_batch(count);
  for (int row = 0; row < count; ++row) layout_.fill_row(windows[first + row], row, batch);
  return batch;
}

std::vector<Batch> evaluation_batches(const TokenFile& file, int seq_len, int micro_batch,
                                      int max_windows) {
  LLMFT_REQUIRE(micro_batch > 0 && max_windows > 0, "evaluation_batches: micro_batch ("
                                                        << micro_batch << ") and max_windows ("
                                                        << max_windows << ") must be positive");
  const WindowLayout layout(file, seq_len);
  const size_t windows = std::min(layout.num_windows(), static_cast<size_t>(max_windows));
  std::vector<Batch> batches;
  for (size_t begin = 0; begin < windows; begin += micro_batch) {
    const int rows = static_cast<int>(std::min<size_t>(micro_batch, windows - begin));
    Batch batch = layout.empty_batch(rows);
    for (int row = 0; row < rows; ++row) layout.fill_row(begin + row, row, batch);
    batches.push_back(std::move(batch));
  }
  return batches;
}

std::vector<MicroBatch> micro_batch_views(const std::vector<Batch>& batches) {
  std::vector<MicroBatch> views;
  for (const Batch& b : batches) {
    views.push_back(MicroBatch{b.batch, b.seq_len, b.inputs.data(), b.targets.data(), 0,
                               b.positions.empty() ? nullptr : b.positions.data()});
  }
  return views;
}

}  // namespace llmft::io
