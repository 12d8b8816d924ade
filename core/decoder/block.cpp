#include "core/decoder/block.h"

namespace llmft {

namespace {

Tensor take_dtype(Allocator& alloc, DType dtype, Buffer& buffer, Shape shape,
                  MemoryCategory category, const std::string& what) {
  buffer =
      alloc.allocate(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype), category, what);
  return buffer.as(dtype, std::move(shape));
}

}  // namespace

Tensor BlockContext::take(Buffer& buffer, Shape shape, MemoryCategory category,
                          const std::string& what) const {
  return take_dtype(alloc, activations, buffer, std::move(shape), category, what);
}

Tensor BlockContext::take_f32(Buffer& buffer, Shape shape, MemoryCategory category,
                              const std::string& what) const {
  return take_dtype(alloc, DType::f32, buffer, std::move(shape), category, what);
}

std::unique_ptr<CommRequest> BlockContext::start_tp_reduce(Tensor t, ReduceOp op) const {
  return tp_group ? tp_group->all_reduce(t, op) : nullptr;
}

void BlockContext::tp_reduce(Tensor t, ReduceOp op) const {
  if (auto request = start_tp_reduce(t, op)) request->wait_on_device();
}

Tensor BlockContext::gather_rows(Buffer& buffer, Tensor local, const std::string& what) const {
  if (!sequence_parallel) return local;
  Tensor all = take(buffer, {shape.rows(), local.dim(-1)}, MemoryCategory::workspace, what);
  tp_group->all_gather(local, all)->wait_on_device();
  return all;
}

Tensor BlockContext::partial_rows(Buffer& buffer, Tensor local, const std::string& what) const {
  if (!sequence_parallel) return local;
  return take(buffer, {shape.rows(), local.dim(-1)}, MemoryCategory::workspace, what);
}

std::unique_ptr<CommRequest> BlockContext::start_reduce_rows(Tensor partial, Tensor local) const {
  if (!sequence_parallel) return start_tp_reduce(local);
  return tp_group->reduce_scatter(partial, local);
}

void BlockContext::reduce_rows(Tensor partial, Tensor local) const {
  if (auto request = start_reduce_rows(partial, local)) request->wait_on_device();
}

Tensor BlockContext::attention_input(Tensor qkv) const {
  if (!kv_cache.defined()) return qkv;
  const int64_t B = qkv.dim(0), T = qkv.dim(1), W = qkv.dim(2), R = kv_cache.dim(1);
  for (int64_t b = 0; b < B; ++b) {
    be.copy(kv_cache.view((b * R + position_offset) * W, {T, W}), qkv.view(b * T * W, {T, W}));
  }
  return kv_cache;
}

}  // namespace llmft
