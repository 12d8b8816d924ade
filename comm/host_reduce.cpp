#include "comm/host_reduce.h"

namespace llmft {

double reduce_host_value(Communicator& group, Backend& backend, Tensor scratch, double value,
                         ReduceOp op) {
  const float mine = static_cast<float>(value);
  backend.copy_to_device(scratch, &mine);
  group.all_reduce(scratch, op)->wait();
  float reduced = 0.0f;
  backend.copy_to_host(&reduced, scratch);
  return reduced;
}

}  // namespace llmft
