#include "parallel/dry_run.h"

#include <vector>

namespace llmft {

DryRun::DryRun(const ModelConfig& config, const RunShape& shape)
    : shape_(shape),
      slice_{shape.tp_rank, shape.tp},
      device_(shape.compute, shape.attention),
      allocator_(device_.memory(), 0) {
  if (shape.ranks > 1) {
    data_parallel_ =
        std::make_unique<CountingCommunicator>(shape.rank, shape.ranks, shape.overlapped_comm);
  }
  if (shape.tp > 1) {
    tensor_parallel_ = std::make_unique<CountingCommunicator>(shape.tp_rank, shape.tp);
  }
  ModelOptions model_options(false, slice_, tensor_parallel_.get());
  model_options.checkpointed_blocks = shape.checkpointed_blocks;
  model_options.sequence_parallel = shape.sequence_parallel;
  model_ = make_model(config, device_, allocator_, model_options);
  EngineOptions options;
  options.dtype = shape.dtype;
  options.optimizer = shape.optimizer;
  options.clip_grad = shape.clip_grad ? 1.0f : 0.0f;
  options.loss_scale = LossScaleConfig{shape.dtype == DType::f16, 1.0f, 1000};
  options.initialize = false;
  options.data_parallel = data_parallel_.get();
  options.zero_stage = shape.zero_stage;
  options.tensor_parallel = tensor_parallel_.get();
  if (shape.offload_optimizer) {
    host_allocator_ = std::make_unique<Allocator>(device_.host_pool_memory(), 0);
    options.offload = HostPool{&host_, host_allocator_.get()};
  }
  engine_ = std::make_unique<Engine>(*model_, device_, allocator_, options);
}

void DryRun::train_step(int step, int micro_batches) {
  const std::vector<int32_t> tokens(static_cast<size_t>(shape_.micro_batch) * shape_.seq_len, 0);
  const MicroBatch batch{shape_.micro_batch, shape_.seq_len, tokens.data(), tokens.data()};
  engine_->train_step(std::vector<MicroBatch>(static_cast<size_t>(micro_batches), batch), step);
}

}  // namespace llmft
