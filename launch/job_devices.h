// What `llmft train` and `llmft eval` share to set a job up on its ranks: the backend and
// the world communicator (created and warmed before the backend reserves its memory, so
// that their own buffers are measured beside it), the dp x tp mesh of --tp and --dp, this
// rank's model options, and the check of a token file against the model.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/mpi_runtime.h"
#include "core/backend.h"
#include "core/model.h"
#include "core/model_config.h"
#include "io/token_file.h"
#include "launch/train_options.h"
#include "parallel/mesh.h"

namespace llmft {

struct JobDevices {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Communicator> world;  // null on one rank
  size_t requested_memory = 0;          // --device-memory (0: none asked)
};

// This rank's backend for --device (--share-devices, --device-memory), the world
// communicator warmed for `dtype`, and --threads (resolved: not 0) set.
JobDevices start_devices(const TrainOptions& o, MpiRuntime& mpi, DType dtype);

struct JobMesh {
  MeshShape shape;
  // The world with its ranks node by node, where the launcher dealt them across nodes and
  // tp > 1 (comm/mpi_node_order.h); the mesh is laid over it. Null otherwise. Outlives
  // the mesh's groups, which may share its resources.
  std::unique_ptr<Communicator> node_major_world;
  std::unique_ptr<Mesh> mesh;               // null on one rank
  Communicator* data_parallel = nullptr;    // when dp > 1
  Communicator* tensor_parallel = nullptr;  // when tp > 1

  TpSlice tp_slice() const { return TpSlice{mesh ? mesh->tp_rank() : 0, shape.tp}; }
  int dp_rank() const { return mesh ? mesh->dp_rank() : 0; }
};

// The ranks as a dp x tp mesh of --tp (tensor-parallel ranks adjacent, taken node by
// node so that a group stays within a node), checked against --dp, with its groups split
// from `world` and warmed for `dtype`. Where the job spans nodes and tp > 1, rank 0 names
// each tensor-parallel group's ranks and host on stderr.
JobMesh split_mesh(const TrainOptions& o, Communicator* world, int world_size,
                   const ModelConfig& config, DType dtype);

// The model's options on this rank: its tensor-parallel slice and group, activation
// checkpointing and sequence parallelism as resolved in `o`.
ModelOptions model_options_for(const TrainOptions& o, const JobMesh& mesh);

// `option` (--data, --val-data) names `file` in the error when its vocabulary is not the
// model's.
void check_vocab(const io::TokenFile& file, const ModelConfig& config, const std::string& option);

}  // namespace llmft
