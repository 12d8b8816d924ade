#include "core/tp_slice.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace llmft {

int64_t tp_rows(int64_t full, int size) {
  return (full + size - 1) / size;
}

ParamInfo tp_split(ParamInfo p, TpSplit split, TpSlice slice, int sections) {
  p.full_shape = p.shape;
  p.tp_split = split;
  p.tp_sections = sections;
  if (split == TpSplit::rows) {
    p.shape[0] = sections * tp_rows(p.full_shape[0] / sections, slice.size);
  } else if (split == TpSplit::columns) {
    LLMFT_REQUIRE(p.shape[1] % slice.size == 0, "internal: " << p.name << " has " << p.shape[1]
                                                             << " columns, not a multiple of "
                                                             << slice.size);
    p.shape[1] /= slice.size;
  }
  return p;
}

ParamInfo vocab_split(ParamInfo p, TpSlice slice, int64_t row_multiple) {
  p = tp_split(std::move(p), TpSplit::rows, slice);
  p.shape[0] = (p.shape[0] + row_multiple - 1) / row_multiple * row_multiple;
  return p;
}

std::vector<TpRun> tp_runs(const ParamInfo& p, TpSlice slice) {
  std::vector<TpRun> runs;
  if (p.tp_split == TpSplit::replicated) {
    runs.push_back({0, 0, p.numel()});
  } else if (p.tp_split == TpSplit::rows) {
    const int64_t row = p.numel() / p.shape[0];  // elements per row
    const int64_t full_part = p.full_shape[0] / p.tp_sections;
    const int64_t local_part = p.shape[0] / p.tp_sections;
    const int64_t first = slice.rank * local_part;  // first row of the part this rank holds
    const int64_t rows = std::clamp<int64_t>(full_part - first, 0, local_part);
    for (int s = 0; s < p.tp_sections && rows > 0; ++s) {
      runs.push_back({s * local_part * row, (s * full_part + first) * row, rows * row});
    }
  } else {
    const int64_t local_cols = p.shape[1], full_cols = p.full_shape[1];
    for (int64_t r = 0; r < p.shape[0]; ++r) {
      runs.push_back({r * local_cols, r * full_cols + slice.rank * local_cols, local_cols});
    }
  }
  return runs;
}

namespace {

// Calls copy(local offset, whole offset, count) for every run of every parameter.
template <typename Copy>
void for_each_run(const UnitLayout& whole_layout, const UnitLayout& local_layout, TpSlice slice,
                  Copy copy) {
  LLMFT_REQUIRE(whole_layout.params.size() == local_layout.params.size(),
                "internal: unit " << local_layout.name << " does not match its whole layout");
  for (size_t i = 0; i < local_layout.params.size(); ++i) {
    const ParamInfo& local = local_layout.params[i];
    const int64_t whole_offset = whole_layout.params[i].offset;
    for (const TpRun& run : tp_runs(local, slice)) {
      copy(local.offset + run.local, whole_offset + run.full, run.count);
    }
  }
}

}  // namespace

std::vector<float> slice_unit(const UnitLayout& whole_layout, const UnitLayout& local_layout,
                              TpSlice slice, const std::vector<float>& whole) {
  std::vector<float> local(static_cast<size_t>(local_layout.numel), 0.0f);
  for_each_run(whole_layout, local_layout, slice, [&](int64_t l, int64_t w, int64_t n) {
    std::copy_n(whole.begin() + w, n, local.begin() + l);
  });
  return local;
}

std::vector<float> whole_from_slice(const UnitLayout& whole_layout, const UnitLayout& local_layout,
                                    const std::vector<float>& local) {
  std::vector<float> whole(static_cast<size_t>(whole_layout.numel), 0.0f);
  place_slice(whole_layout, local_layout, TpSlice{}, local.data(), whole);
  return whole;
}

void place_slice(const UnitLayout& whole_layout, const UnitLayout& local_layout, TpSlice slice,
                 const float* local, std::vector<float>& whole) {
  for_each_run(whole_layout, local_layout, slice, [&](int64_t l, int64_t w, int64_t n) {
    std::copy_n(local + l, n, whole.begin() + w);
  });
}

}  // namespace llmft
