// Mesh shapes: which tensor-parallel sizes fit a model and a world, and the errors.
#include <doctest/doctest.h>

#include "core/error.h"
#include "parallel/mesh.h"

using namespace llmft;

TEST_CASE("tensor-parallel sizes must divide the world, the heads, the kv heads, the MLP") {
  const ModelConfig c = preset_config("llama2-70b");  // 64 heads, 8 kv heads, MLP 28672
  CHECK(valid_tp_sizes(8, c) == std::vector<int>{1, 2, 4, 8});
  CHECK(valid_tp_sizes(6, c) == std::vector<int>{1, 2});
  const MeshShape shape = mesh_shape(8, 2, c);
  CHECK(shape.dp == 4);
  CHECK(shape.tp == 2);
  CHECK_THROWS_WITH_AS(mesh_shape(6, 3, c),
                       doctest::Contains("--tp 3 does not divide the attention heads (64)"), Error);
  ModelConfig gpt2 = preset_config("gpt2");  // 12 heads
  CHECK_THROWS_WITH_AS(mesh_shape(16, 8, gpt2), doctest::Contains("use --tp 1, 2, 4"), Error);
  CHECK_THROWS_WITH_AS(mesh_shape(6, 4, gpt2),
                       doctest::Contains("does not divide the number of ranks (6)"), Error);
}
