// checkpoint_staging_bytes counts a checkpoint's largest host transfer without building the
// transfers (the planner asks it for every layout): it must equal the largest transfer that
// state_transfers builds, for every stage, tensor-parallel rank, optimizer and dtype.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

#include "comm/counting_communicator.h"
#include "core/allocator.h"
#include "core/counting/counting_backend.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/state_transfers.h"

namespace llmft {
namespace {

size_t largest_transfer(const Engine& engine, TpSlice slice) {
  size_t largest = 0;
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t : state_transfers(engine, u, slice, 0, TransferDirection::read)) {
      largest = std::max(largest, static_cast<size_t>(t.elements()) * dtype_size(t.dtype));
    }
  }
  return largest;
}

TEST_CASE("checkpoint staging equals the largest transfer in every layout") {
  for (const char* preset : {"gpt2-tiny", "llama-tiny"}) {
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::sgd, OptimizerKind::adalomo}) {
      for (DType dtype : {DType::f32, DType::bf16}) {
        for (int zero : {0, 1, 2, 3}) {
          for (int tp : {1, 2}) {
            for (int tp_rank = 0; tp_rank < tp; ++tp_rank) {
              for (int dp_rank : {0, 2}) {  // of 3: uneven shards
                CAPTURE(preset);
                CAPTURE(std::string(optimizer_kind_name(kind)));
                CAPTURE(zero);
                CAPTURE(tp_rank);
                CAPTURE(dp_rank);
                CountingBackend device;
                Allocator alloc(device.memory(), 0);
                CountingCommunicator data_parallel(dp_rank, 3), tensor_parallel(tp_rank, tp);
                const TpSlice slice{tp_rank, tp};
                std::unique_ptr<Model> model =
                    make_model(preset_config(preset), device, alloc,
                               ModelOptions{false, slice, tp > 1 ? &tensor_parallel : nullptr});
                EngineOptions options;
                options.dtype = dtype;
                options.optimizer.kind = kind;
                options.initialize = false;
                options.data_parallel = &data_parallel;
                options.zero_stage = kind == OptimizerKind::adalomo ? 0 : zero;
                options.tensor_parallel = tp > 1 ? &tensor_parallel : nullptr;
                const Engine engine(*model, device, alloc, options);
                CHECK(checkpoint_staging_bytes(engine, slice) == largest_transfer(engine, slice));
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace llmft
