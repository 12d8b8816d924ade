// How llmft's dtypes travel through MPI: the MPI datatype of one element, and the maximum
// as an MPI reduction op for a float dtype (sums do not use MPI's reductions: see
// comm/ordered_sum.h). f32 is MPI_FLOAT with the predefined MPI_MAX. bf16 and fp16 travel
// as 2-byte integers and take their maximum through user-defined, commutative ops
// (MPI_Op_create) that compare in f32 per element; NaN propagates.
// Thread-safety: call from the thread that calls MPI; the ops are created on first use.
#pragma once

#include <mpi.h>

#include "comm/communicator.h"
#include "core/dtype.h"

namespace llmft {

MPI_Datatype mpi_element_type(DType dtype);

// REQUIRES: dtype is f32, bf16 or f16.
MPI_Op mpi_max_op(DType dtype);

}  // namespace llmft
