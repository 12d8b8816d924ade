#include "comm/mpi_reduce_ops.h"

#include <array>
#include <cmath>
#include <cstdint>

#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/float_traits.h"

namespace llmft {
namespace {

// An MPI_User_function: inout[i] = max(in[i], inout[i]) compared in f32 (exact, so the
// order MPI combines in cannot matter), NaN propagating.
template <typename Traits>
void max_of_halves(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *count; ++i) {
    const float x = Traits::load(a[i]);
    if (x > Traits::load(b[i]) || std::isnan(x)) b[i] = a[i];
  }
}

MPI_Op create_op(MPI_User_function* function) {
  MPI_Op op;
  LLMFT_MPI_CHECK(MPI_Op_create(function, /*commute=*/1, &op));
  return op;
}

// Indexed [is_fp16].
using HalfMaxOps = std::array<MPI_Op, 2>;

HalfMaxOps create_half_max_ops() {
  return {create_op(max_of_halves<BF16>), create_op(max_of_halves<FP16>)};
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

MPI_Op mpi_max_op(DType dtype) {
  LLMFT_REQUIRE(dtype != DType::i32, "internal: cannot reduce " << dtype_name(dtype) << " tensors");
  if (dtype == DType::f32) return MPI_MAX;
  static const HalfMaxOps half_ops = create_half_max_ops();
  return half_ops[dtype == DType::f16];
}

}  // namespace llmft
