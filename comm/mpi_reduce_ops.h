// How llmft's dtypes travel through MPI: the MPI datatype of one element, and the
// reduction op for a float dtype. f32 is MPI_FLOAT with the predefined MPI_SUM / MPI_MAX.
// bf16 and fp16 travel as 2-byte integers and reduce through user-defined, commutative
// ops (MPI_Op_create) that add or take the max in f32 per element and round back to
// nearest even (core/cpu/half.h); their max propagates NaN.
// Thread-safety: call from the thread that calls MPI; the ops are created on first use.
#pragma once

#include <mpi.h>

#include "comm/communicator.h"
#include "core/dtype.h"

namespace llmft {

MPI_Datatype mpi_element_type(DType dtype);

// REQUIRES: dtype is f32, bf16 or f16.
MPI_Op mpi_reduce_op(DType dtype, ReduceOp op);

}  // namespace llmft
