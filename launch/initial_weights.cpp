#include "launch/initial_weights.h"

#include <string>

#include "core/byte_size.h"
#include "io/hf_weight_loader.h"
#include "io/progress.h"
#include "launch/rank_values.h"

namespace llmft {

std::string load_initial_weights(const std::string& path, Engine& engine,
                                 const std::vector<UnitLayout>& whole,
                                 const std::vector<UnitLayout>& local, TpSlice slice,
                                 Communicator* world, Backend& backend) {
  io::HfWeightLoader loader(path);
  io::Progress progress("loading weights from " + loader.files().origin(),
                        static_cast<uint64_t>(total_numel(whole)), io::ProgressCount::parameters());
  for (size_t u = 0; u < whole.size(); ++u) {
    engine.write_params(static_cast<int>(u), loader.read_unit(whole[u], local[u], slice));
    progress.advance(static_cast<uint64_t>(whole[u].numel));
  }
  progress.finish();
  const std::vector<uint64_t> read = gather_rank_values(world, backend, {loader.bytes_read()});
  if (world != nullptr && world->rank() != 0) return "";
  std::string per_rank;
  for (size_t r = 0; r < read.size(); ++r) {
    per_rank += (r > 0 ? ", " : "") + std::to_string(read[r]);
  }
  const int files = loader.files().shard_count();
  return "loaded weights from " + loader.files().origin() + " (" + std::to_string(files) +
         (files == 1 ? " file" : " files") + "); bytes read per rank: " + per_rank + " (" +
         format_bytes(static_cast<double>(read[0])) + " on rank 0)";
}

}  // namespace llmft
