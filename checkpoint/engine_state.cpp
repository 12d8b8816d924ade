#include "checkpoint/engine_state.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/host_convert.h"
#include "parallel/state_transfers.h"

namespace llmft {
namespace {

io::H5Element element_of(DType dtype) {
  return dtype == DType::f32 ? io::H5Element::f32 : io::H5Element::bits16;
}

std::vector<io::FlatRange> ranges_of(const StateTransfer& t) {
  std::vector<io::FlatRange> ranges;
  for (const TensorPiece& piece : t.pieces)
    ranges.push_back({piece.full, piece.full + piece.count});
  return ranges;
}

// Refuses a dataset whose shape or dtype is not the one this run holds.
void check_dataset(const io::Hdf5File& file, const StateTransfer& t) {
  const Shape stored = file.dataset_shape(t.dataset);
  LLMFT_REQUIRE(stored == t.shape,
                "the checkpoint " << file.path() << " holds '" << t.dataset << "' with shape "
                                  << shape_string(stored) << " but this model's is "
                                  << shape_string(t.shape) << ": it was written for another model");
  const std::string dtype = file.dataset_dtype(t.dataset);
  LLMFT_REQUIRE(dtype == dtype_name(t.dtype),
                "the checkpoint " << file.path() << " holds '" << t.dataset << "' as " << dtype
                                  << " but this run keeps it as " << dtype_name(t.dtype)
                                  << ": resume with --dtype " << dtype
                                  << ", or use --resume-weights-only");
}

size_t staging_size(const Engine& engine, TpSlice slice) {
  return std::max<size_t>(checkpoint_staging_bytes(engine, slice), 1);
}

}  // namespace

void write_engine_state(io::Hdf5File& file, const Engine& engine, Backend& backend, TpSlice slice,
                        int dp_rank) {
  std::vector<uint8_t> staging(staging_size(engine, slice));
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t :
         state_transfers(engine, u, slice, dp_rank, TransferDirection::write)) {
      file.create_dataset(t.dataset, element_of(t.dtype), t.shape, dtype_name(t.dtype));
      size_t offset = 0;
      for (const TensorPiece& piece : t.pieces) {
        backend.copy_to_host(staging.data() + offset, t.source.view(piece.local, {piece.count}));
        offset += static_cast<size_t>(piece.count) * dtype_size(t.dtype);
      }
      file.write(t.dataset, element_of(t.dtype), ranges_of(t), staging.data());
    }
  }
}

void read_engine_state(io::Hdf5File& file, Engine& engine, Backend& backend, TpSlice slice) {
  std::vector<uint8_t> staging(staging_size(engine, slice));
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t : state_transfers(engine, u, slice, 0, TransferDirection::read)) {
      check_dataset(file, t);
      file.read(t.dataset, element_of(t.dtype), ranges_of(t), staging.data());
      size_t offset = 0;
      for (const TensorPiece& piece : t.pieces) {
        backend.copy_to_device(t.source.view(piece.local, {piece.count}), staging.data() + offset);
        offset += static_cast<size_t>(piece.count) * dtype_size(t.dtype);
      }
    }
  }
}

std::vector<float> read_param_f32(io::Hdf5File& file, const ParamInfo& p,
                                  const std::vector<TensorPiece>& pieces) {
  StateTransfer t{"master/" + p.name, p.full_shape, DType::f32, Tensor{}, pieces};
  if (!file.has_dataset(t.dataset)) t.dataset = "weights/" + p.name;
  t.dtype = parse_dtype(file.dataset_dtype(t.dataset));
  check_dataset(file, t);
  std::vector<uint8_t> bytes(std::max<size_t>(t.elements() * dtype_size(t.dtype), 1));
  file.read(t.dataset, element_of(t.dtype), ranges_of(t), bytes.data());
  bytes.resize(static_cast<size_t>(t.elements()) * dtype_size(t.dtype));
  return from_dtype_bytes(bytes, t.dtype);
}

void read_engine_weights(io::Hdf5File& file, Engine& engine, TpSlice slice) {
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    const UnitLayout& layout = engine.model().units()[u];
    // The whole unit (this rank's slice of it), as f32.
    std::vector<float> values(static_cast<size_t>(layout.numel), 0.0f);
    const std::vector<TensorPiece> pieces =
        unit_pieces(layout, slice, UnitSpan{0, layout.numel}, false);
    for (size_t i = 0; i < layout.params.size(); ++i) {
      std::vector<TensorPiece> mine;
      for (const TensorPiece& piece : pieces) {
        if (piece.param == static_cast<int>(i)) mine.push_back(piece);
      }
      const std::vector<float> read = read_param_f32(file, layout.params[i], mine);
      size_t offset = 0;
      for (const TensorPiece& piece : mine) {
        std::copy(read.begin() + offset, read.begin() + offset + piece.count,
                  values.begin() + piece.local);
        offset += piece.count;
      }
    }
    engine.write_params(u, values);
  }
}

}  // namespace llmft
