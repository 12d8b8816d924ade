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

std::vector<io::FlatRange> ranges_of(const std::vector<TensorPiece>& pieces) {
  std::vector<io::FlatRange> ranges;
  for (const TensorPiece& piece : pieces) ranges.push_back({piece.full, piece.full + piece.count});
  return ranges;
}

// Refuses a dataset whose shape or dtype is not the one this run holds. The file's model
// config and --dtype were checked against this run's before (checkpoint/checkpoint_info.h),
// so a shape or dtype that differs is damage, not another model or run.
void check_dataset(const io::Hdf5File& file, const StateTransfer& t) {
  const Shape stored = file.dataset_shape(t.dataset);
  LLMFT_REQUIRE(stored == t.shape,
                "the checkpoint " << file.path() << " holds '" << t.dataset << "' with shape "
                                  << shape_string(stored) << " where its own model config gives "
                                  << shape_string(t.shape)
                                  << ": the file is damaged; resume from another checkpoint");
  const std::string dtype = file.dataset_dtype(t.dataset);
  LLMFT_REQUIRE(dtype == dtype_name(t.dtype),
                "the checkpoint " << file.path() << " holds '" << t.dataset << "' as " << dtype
                                  << " where its own --dtype keeps it as " << dtype_name(t.dtype)
                                  << ": the file is damaged; resume from another checkpoint");
}

size_t staging_size(const Engine& engine, TpSlice slice) {
  return std::max<size_t>(checkpoint_staging_bytes(engine, slice), 1);
}

}  // namespace

uint64_t engine_progress_total(const Engine& engine) {
  return engine.model().units().size();
}

void write_engine_state(io::Hdf5File& file, const Engine& engine, Backend& backend, TpSlice slice,
                        int dp_rank, io::Progress& progress) {
  std::vector<uint8_t> staging(staging_size(engine, slice));
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t :
         state_transfers(engine, u, slice, dp_rank, TransferDirection::write)) {
      file.create_dataset(t.dataset, element_of(t.dtype), t.shape, dtype_name(t.dtype));
      file.agree(io::failure_of([&] {
        size_t offset = 0;
        for (const TensorPiece& piece : t.pieces) {
          backend.copy_to_host(staging.data() + offset, t.source.view(piece.local, {piece.count}));
          offset += static_cast<size_t>(piece.count) * dtype_size(t.dtype);
        }
      }));
      file.write(t.dataset, element_of(t.dtype), ranges_of(t.pieces), staging.data());
    }
    progress.update(static_cast<uint64_t>(u) + 1);
  }
}

void read_engine_state(io::Hdf5File& file, Engine& engine, Backend& backend, TpSlice slice,
                       int dp_rank, io::Progress& progress) {
  std::vector<uint8_t> staging(staging_size(engine, slice));
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    const std::vector<StateTransfer> reads =
        state_transfers(engine, u, slice, 0, TransferDirection::read);
    // What this rank would write is what it verifies: every element once over the ranks.
    const std::vector<StateTransfer> verified =
        state_transfers(engine, u, slice, dp_rank, TransferDirection::write);
    for (size_t i = 0; i < reads.size(); ++i) {
      const StateTransfer& t = reads[i];
      check_dataset(file, t);
      file.read(t.dataset, element_of(t.dtype), ranges_of(t.pieces), staging.data(),
                ranges_of(verified[i].pieces));
      size_t offset = 0;
      for (const TensorPiece& piece : t.pieces) {
        backend.copy_to_device(t.source.view(piece.local, {piece.count}), staging.data() + offset);
        offset += static_cast<size_t>(piece.count) * dtype_size(t.dtype);
      }
    }
    progress.update(static_cast<uint64_t>(u) + 1);
  }
}

std::vector<float> read_param_f32(io::Hdf5File& file, const ParamInfo& p,
                                  const std::vector<TensorPiece>& pieces,
                                  const std::vector<TensorPiece>& verify) {
  StateTransfer t{"master/" + p.name, p.full_shape, DType::f32, Tensor{}, pieces};
  if (!file.has_dataset(t.dataset)) t.dataset = "weights/" + p.name;
  t.dtype = parse_dtype(file.dataset_dtype(t.dataset));
  check_dataset(file, t);
  std::vector<uint8_t> bytes(std::max<size_t>(t.elements() * dtype_size(t.dtype), 1));
  file.read(t.dataset, element_of(t.dtype), ranges_of(pieces), bytes.data(), ranges_of(verify));
  bytes.resize(static_cast<size_t>(t.elements()) * dtype_size(t.dtype));
  return from_dtype_bytes(bytes, t.dtype);
}

void read_engine_weights(io::Hdf5File& file, Engine& engine, TpSlice slice, int dp_rank,
                         io::Progress& progress) {
  // Of each parameter, a rank verifies what it would write: data-parallel rank 0 its slice,
  // replicated parameters on tensor-parallel rank 0 alone.
  const auto of_param = [](const std::vector<TensorPiece>& pieces, size_t param) {
    std::vector<TensorPiece> mine;
    for (const TensorPiece& piece : pieces) {
      if (piece.param == static_cast<int>(param)) mine.push_back(piece);
    }
    return mine;
  };
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    const UnitLayout& layout = engine.model().units()[u];
    // The whole unit (this rank's slice of it), as f32.
    std::vector<float> values(static_cast<size_t>(layout.numel), 0.0f);
    const UnitSpan whole{0, layout.numel};
    const std::vector<TensorPiece> pieces = unit_pieces(layout, slice, whole, false);
    const std::vector<TensorPiece> owned =
        dp_rank == 0 ? unit_pieces(layout, slice, whole, true) : std::vector<TensorPiece>{};
    for (size_t i = 0; i < layout.params.size(); ++i) {
      const std::vector<TensorPiece> mine = of_param(pieces, i);
      const std::vector<float> read =
          read_param_f32(file, layout.params[i], mine, of_param(owned, i));
      size_t offset = 0;
      for (const TensorPiece& piece : mine) {
        std::copy(read.begin() + offset, read.begin() + offset + piece.count,
                  values.begin() + piece.local);
        offset += piece.count;
      }
    }
    engine.write_params(u, values);
    progress.update(static_cast<uint64_t>(u) + 1);
  }
}

uint64_t checkpoint_file_bytes(const Engine& engine, TpSlice slice) {
  constexpr uint64_t kMetadataPerDataset = 4096;  // object header, chunk index, attributes
  uint64_t bytes = 0;
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t : state_transfers(engine, u, slice, 0, TransferDirection::write)) {
      const uint64_t elements = static_cast<uint64_t>(shape_numel(t.shape));
      const uint64_t chunk = io::kMaxChunkElements;
      const uint64_t chunks = (elements + chunk - 1) / chunk;
      bytes += elements * dtype_size(t.dtype) + chunks * 4 + kMetadataPerDataset;
    }
  }
  return bytes;
}

}  // namespace llmft
