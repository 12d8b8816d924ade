#include "launch/initial_weights.h"

#include <cstdio>
#include <string>

#include "core/byte_size.h"
#include "io/hf_weight_loader.h"
#include "launch/rank_values.h"

namespace llmft {

void load_initial_weights(const std::string& path, Engine& engine,
                          const std::vector<UnitLayout>& whole,
                          const std::vector<UnitLayout>& local, TpSlice slice, Communicator* world,
                          Backend& backend) {
  io::HfWeightLoader loader(path);
  for (size_t u = 0; u < whole.size(); ++u) {
    engine.write_params(static_cast<int>(u), loader.read_unit(whole[u], local[u], slice));
  }
  const std::vector<uint64_t> read = gather_rank_values(world, backend, {loader.bytes_read()});
  if (world != nullptr && world->rank() != 0) return;
  std::string per_rank;
  for (size_t r = 0; r < read.size(); ++r) {
    per_rank += (r > 0 ? ", " : "") + std::to_string(read[r]);
  }
  std::printf("loaded weights from %s (%d file%s); bytes read per rank: %s (%s on rank 0)\n",
              loader.files().origin().c_str(), loader.files().shard_count(),
              loader.files().shard_count() == 1 ? "" : "s", per_rank.c_str(),
              format_bytes(static_cast<double>(read[0])).c_str());
}

}  // namespace llmft
