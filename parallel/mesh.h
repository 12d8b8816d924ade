// Mesh: the ranks of a job as a dp x tp grid. Tensor-parallel ranks vary fastest
// (rank = tp_rank + tp * dp_rank, as Megatron-LM lays them out), so a tensor-parallel
// group holds consecutive ranks and stays inside one node. The mesh splits the world
// into its data-parallel groups (ranks with the same tp_rank) and tensor-parallel groups
// (ranks with the same dp_rank).
//
// Thread-safety: one Mesh per rank, used from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/model_config.h"

namespace llmft {

struct MeshShape {
  int dp = 1;
  int tp = 1;
};

// The tensor-parallel sizes that divide the world, the attention heads, the key/value
// heads and the MLP width of `config`.
std::vector<int> valid_tp_sizes(int world, const ModelConfig& config);

// dp = world / tp. Throws llmft::Error naming what `tp` fails to divide and listing the
// sizes that work.
MeshShape mesh_shape(int world, int tp, const ModelConfig& config);

class Mesh {
 public:
  // Collective over `world`. REQUIRES: shape.dp * shape.tp == world.size()
  Mesh(Communicator& world, MeshShape shape);

  const MeshShape& shape() const { return shape_; }
  int dp_rank() const { return dp_rank_; }
  int tp_rank() const { return tp_rank_; }
  Communicator& data_parallel() { return *dp_group_; }
  Communicator& tensor_parallel() { return *tp_group_; }

 private:
  MeshShape shape_;
  int dp_rank_, tp_rank_;
  std::unique_ptr<Communicator> dp_group_, tp_group_;
};

}  // namespace llmft
