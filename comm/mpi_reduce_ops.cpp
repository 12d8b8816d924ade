#include "comm/mpi_reduce_ops.h"

#include <array>
#include <cmath>
#include <cstdint>

#include "comm/mpi_runtime.h"
#include "core/cpu/float_traits.h"
#include "core/error.h"

namespace llmft {
namespace {

struct Sum {
  float operator()(float a, float b) const { return a + b; }
};
struct Max {
  float operator()(float a, float b) const { return (a > b || std::isnan(a)) ? a : b; }
};

// An MPI_User_function: inout[i] = combine(in[i], inout[i]), in f32, rounded back.
template <typename Traits, typename Combine>
void combine_halves(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *count; ++i) {
    b[i] = Traits::store(Combine{}(Traits::load(a[i]), Traits::load(b[i])));
  }
}

MPI_Op create_op(MPI_User_function* function) {
  MPI_Op op;
  LLMFT_MPI_CHECK(MPI_Op_create(function, /*commute=*/1, &op));
  return op;
}

// Indexed [is_fp16][is max].
using HalfOps = std::array<std::array<MPI_Op, 2>, 2>;

HalfOps create_half_ops() {
  return {{{create_op(combine_halves<cpu::BF16, Sum>), create_op(combine_halves<cpu::BF16, Max>)},
           {create_op(combine_halves<cpu::FP16, Sum>), create_op(combine_halves<cpu::FP16, Max>)}}};
}

}  // namespace

MPI_Datatype mpi_element_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return MPI_FLOAT;
    case DType::bf16:
    case DType::f16:
      return MPI_UINT16_T;
    case DType::i32:
      return MPI_INT32_T;
  }
  LLMFT_FAIL("internal: no MPI datatype for dtype " << static_cast<int>(dtype));
}

MPI_Op mpi_reduce_op(DType dtype, ReduceOp op) {
  LLMFT_REQUIRE(dtype != DType::i32, "internal: cannot reduce " << dtype_name(dtype) << " tensors");
  if (dtype == DType::f32) return op == ReduceOp::sum ? MPI_SUM : MPI_MAX;
  static const HalfOps half_ops = create_half_ops();
  return half_ops[dtype == DType::f16][op == ReduceOp::max];
}

}  // namespace llmft
