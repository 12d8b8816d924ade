#include "parallel/state_transfers.h"

#include <algorithm>

#include "optim/adalomo.h"

namespace llmft {
namespace {

// AdaLomo's statistics of one unit: its state tensor as row and column vectors.
void add_adalomo_transfers(const UnitLayout& layout, TpSlice slice, const Engine::Held& held,
                           bool writer, TransferDirection direction,
                           std::vector<StateTransfer>& transfers) {
  for (const AdaLomoStatistic& statistic : adalomo_statistics(layout, slice)) {
    const ParamInfo& p = layout.params[statistic.param];
    StateTransfer t;
    t.dataset = std::string(statistic.rows ? "adalomo_row/" : "adalomo_col/") + p.name;
    t.shape = {statistic.full};
    t.source = held.tensor;
    const bool owner = !statistic.replicated || slice.rank == 0;
    if (direction == TransferDirection::read || (writer && owner)) {
      for (const TpRun& run : statistic.runs) {
        t.pieces.push_back({statistic.param, run.full, statistic.local + run.local, run.count});
      }
    }
    transfers.push_back(std::move(t));
  }
}

}  // namespace

int64_t StateTransfer::elements() const {
  int64_t n = 0;
  for (const TensorPiece& piece : pieces) n += piece.count;
  return n;
}

std::vector<StateTransfer> state_transfers(const Engine& engine, int unit, TpSlice slice,
                                           int dp_rank, TransferDirection direction,
                                           bool state_kinds) {
  const UnitLayout& layout = engine.model().units()[unit];
  const bool reading = direction == TransferDirection::read;
  std::vector<StateTransfer> transfers;
  for (const Engine::Held& held : engine.held(unit)) {
    const bool weights = held.kind == "weights" || held.kind == "master";
    if (!weights && !state_kinds) continue;
    const bool writer = !held.shared || dp_rank == 0;
    if (held.kind == "adalomo") {
      add_adalomo_transfers(layout, slice, held, writer, direction, transfers);
      continue;
    }
    std::vector<TensorPiece> pieces;
    if (reading || writer) pieces = unit_pieces(layout, slice, held.range, !reading);
    for (size_t i = 0; i < layout.params.size(); ++i) {
      const ParamInfo& p = layout.params[i];
      StateTransfer t{held.kind + "/" + p.name, p.full_shape, held.tensor.dtype, held.tensor, {}};
      for (const TensorPiece& piece : pieces) {
        if (piece.param == static_cast<int>(i)) t.pieces.push_back(piece);
      }
      transfers.push_back(std::move(t));
    }
  }
  return transfers;
}

size_t checkpoint_staging_bytes(const Engine& engine, TpSlice slice) {
  // The read side of state_transfers, counted without building its pieces (a tensor-parallel
  // slice has a run per row, and the planner asks this for every layout it tries): a
  // parameter's transfer holds the part of the held range the parameter overlaps (for a
  // row split, the part its runs overlap), an AdaLomo statistic all of its runs.
  size_t largest = 0;
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    const UnitLayout& layout = engine.model().units()[u];
    for (const Engine::Held& held : engine.held(u)) {
      const size_t element = dtype_size(held.tensor.dtype);
      if (held.kind == "adalomo") {
        for (const AdaLomoStatistic& statistic : adalomo_statistics(layout, slice)) {
          int64_t elements = 0;
          for (const TpRun& run : statistic.runs) elements += run.count;
          largest = std::max(largest, static_cast<size_t>(elements) * element);
        }
        continue;
      }
      for_each_param_piece(layout, held.range, [&](int i, int64_t offset, int64_t count) {
        const ParamInfo& p = layout.params[i];
        if (p.tp_split == TpSplit::rows) {
          // A run per section, and the vocabulary's padding rows in none of them.
          const int64_t begin = held.range.begin + offset - p.offset, end = begin + count;
          count = 0;
          for (const TpRun& run : tp_runs(p, slice)) {
            count += std::max<int64_t>(
                0, std::min(end, run.local + run.count) - std::max(begin, run.local));
          }
        }
        largest = std::max(largest, static_cast<size_t>(count) * element);
      });
    }
  }
  return largest;
}

}  // namespace llmft
