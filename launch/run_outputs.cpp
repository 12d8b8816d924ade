#include "launch/run_outputs.h"

#include <string>

#include "comm/mpi_lead_decision.h"
#include "io/output_directory.h"

namespace llmft {

void open_run_outputs(const TrainOptions& o, const ModelConfig& config, bool lead,
                      RunOutputs& outputs) {
  decided_on_lead(
      lead,
      [&] {
        if (!o.save_dir.empty()) {
          io::prepare_output_directory(
              o.save_dir, "--save-dir",
              static_cast<uint64_t>(parameter_count(config)) * sizeof(float),
              "the model's f32 weights");
          outputs.save_dir_lock.emplace(o.save_dir, "--save-dir",
                                        "llmft train --data " + o.data + " --model " + o.model);
        }
        outputs.metrics = io::MetricsWriter(o.metrics);
        return std::string();
      },
      o.comm_timeout);
}

}  // namespace llmft
