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
  size_t largest = 0;
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t : state_transfers(engine, u, slice, 0, TransferDirection::read)) {
      largest = std::max(largest, static_cast<size_t>(t.elements()) * dtype_size(t.dtype));
    }
  }
  return largest;
}

}  // namespace llmft
