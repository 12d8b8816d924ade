#include "parallel/mesh.h"

#include <sstream>

#include "core/error.h"

namespace llmft {

std::vector<int> valid_tp_sizes(int world, const ModelConfig& c) {
  std::vector<int> sizes;
  for (int tp = 1; tp <= world; ++tp) {
    if (world % tp == 0 && c.n_head % tp == 0 && c.n_kv_head % tp == 0 &&
        c.intermediate % tp == 0) {
      sizes.push_back(tp);
    }
  }
  return sizes;
}

MeshShape mesh_shape(int world, int tp, const ModelConfig& c) {
  std::ostringstream valid;
  for (int size : valid_tp_sizes(world, c)) valid << (valid.tellp() > 0 ? ", " : "") << size;
  auto require = [&](bool ok, const std::string& what, int value) {
    LLMFT_REQUIRE(ok, "--tp " << tp << " does not divide " << what << " (" << value << "); with "
                              << world << " ranks and --model " << c.name << " use --tp "
                              << valid.str());
  };
  LLMFT_REQUIRE(tp >= 1, "--tp must be at least 1 (got " << tp << ")");
  require(world % tp == 0, "the number of ranks", world);
  require(c.n_head % tp == 0, "the attention heads", c.n_head);
  require(c.n_kv_head % tp == 0, "the key/value heads", c.n_kv_head);
  require(c.intermediate % tp == 0, "the MLP width", c.intermediate);
  return MeshShape{world / tp, tp};
}

Mesh::Mesh(Communicator& world, MeshShape shape)
    : shape_(shape), dp_rank_(world.rank() / shape.tp), tp_rank_(world.rank() % shape.tp) {
  LLMFT_REQUIRE(shape.dp * shape.tp == world.size(),
                "internal: a " << shape.dp << " x " << shape.tp << " mesh needs "
                               << shape.dp * shape.tp << " ranks, not " << world.size());
  // Same tp_rank: one data-parallel group, ordered by dp_rank; same dp_rank: one
  // tensor-parallel group, ordered by tp_rank.
  dp_group_ = world.split(tp_rank_, dp_rank_);
  tp_group_ = world.split(dp_rank_, tp_rank_);
}

}  // namespace llmft
