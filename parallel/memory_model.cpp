#include "parallel/memory_model.h"

#include <memory>
#include <vector>

#include "comm/counting_communicator.h"
#include "core/allocator.h"
#include "core/counting/counting_backend.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/state_transfers.h"

namespace llmft {

MemoryPrediction predict_memory(const ModelConfig& config, const RunShape& shape) {
  CountingBackend device(shape.compute);
  Allocator alloc(device.memory(), 0);
  std::unique_ptr<CountingCommunicator> data_parallel, tensor_parallel;
  if (shape.ranks > 1)
    data_parallel = std::make_unique<CountingCommunicator>(shape.rank, shape.ranks);
  if (shape.tp > 1)
    tensor_parallel = std::make_unique<CountingCommunicator>(shape.tp_rank, shape.tp);
  const TpSlice slice{shape.tp_rank, shape.tp};
  std::unique_ptr<Model> model =
      make_model(config, device, alloc,
                 ModelOptions{shape.activation_checkpointing, slice, tensor_parallel.get()});
  EngineOptions options;
  options.dtype = shape.dtype;
  options.optimizer = shape.optimizer;
  options.clip_grad = shape.clip_grad ? 1.0f : 0.0f;
  options.loss_scale = LossScaleConfig{shape.dtype == DType::f16, 1.0f, 1000};
  options.initialize = false;
  options.data_parallel = data_parallel.get();
  options.zero_stage = shape.zero_stage;
  options.tensor_parallel = tensor_parallel.get();
  Engine engine(*model, device, alloc, options);
  // Every position a target; the tokens are never read.
  const std::vector<int32_t> tokens(static_cast<size_t>(shape.micro_batch) * shape.seq_len, 0);
  engine.train_step({MicroBatch{shape.micro_batch, shape.seq_len, tokens.data(), tokens.data()}},
                    1);
  MemoryPrediction prediction;
  prediction.peak_by_category = alloc.peak_by_category();
  prediction.at_peak = alloc.at_total_peak();
  prediction.peak_total = alloc.total_peak();
  prediction.peak_phase = alloc.peak_phase();
  prediction.checkpoint_staging = checkpoint_staging_bytes(engine, slice);
  return prediction;
}

}  // namespace llmft
