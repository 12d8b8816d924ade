// Moving an Engine's training state into and out of a checkpoint file: every rank calls
// these together (collective parallel HDF5), each writing or reading only the hyperslabs
// its state transfers name (parallel/state_transfers.h). One host staging buffer of
// checkpoint_staging_bytes() carries each dataset's part between the device and the file;
// no device memory is allocated.
#pragma once

#include <vector>

#include "core/backend.h"
#include "core/tp_slice.h"
#include "core/unit_pieces.h"
#include "io/hdf5_file.h"
#include "io/progress.h"
#include "parallel/engine.h"

namespace llmft {

// Each function below that takes a `progress` reports to it the model units (embedding,
// blocks, head) done so far, of engine_progress_total(engine).
uint64_t engine_progress_total(const Engine& engine);

// Creates and writes every dataset of `engine`'s state.
void write_engine_state(io::Hdf5File& file, const Engine& engine, Backend& backend, TpSlice slice,
                        int dp_rank, io::Progress& progress);

// Reads every dataset of `engine`'s state (the weights, the masters and the optimizer
// state) into the engine's tensors, verifying each dataset's digest over the elements this
// rank would write (`dp_rank`): together the ranks verify every element once. Errors name
// the dataset whose shape, dtype or values differ.
void read_engine_state(io::Hdf5File& file, Engine& engine, Backend& backend, TpSlice slice,
                       int dp_rank, io::Progress& progress);

// The f32 values of `pieces` of parameter `p` (their `full` ranges, one after another):
// from its f32 master weights when the file has them, else from its stored weights. The
// ranks' `verify` pieces (each a subset of its `pieces`) cover the parameter once.
// Collective: a rank that needs nothing passes no pieces.
std::vector<float> read_param_f32(io::Hdf5File& file, const ParamInfo& p,
                                  const std::vector<TensorPiece>& pieces,
                                  const std::vector<TensorPiece>& verify);

// Reads the weights alone, in whatever dtype the file holds them (the f32 masters when
// it has them), into the engine's weights and masters.
void read_engine_weights(io::Hdf5File& file, Engine& engine, TpSlice slice, int dp_rank,
                         io::Progress& progress);

// The bytes a checkpoint of `engine`'s state takes on disk, to within its metadata: every
// dataset's elements and chunk checksums, and a few KiB per dataset (`slice`: this rank's).
uint64_t checkpoint_file_bytes(const Engine& engine, TpSlice slice);

}  // namespace llmft
