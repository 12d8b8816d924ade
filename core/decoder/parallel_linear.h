// Megatron-style tensor-parallel linear layers (Shoeybi et al. 2019), as the blocks and
// the LM head use them. A column-parallel layer holds a block of the weight's rows: its
// input is whole on every rank and its output is this rank's columns, so forward needs no
// communication and backward sums the input gradient over the group. A row-parallel
// layer holds a block of the weight's columns: its input is this rank's columns and its
// output a partial sum, reduced over the group in forward; its bias is added once, by
// tensor-parallel rank 0, before the sum. Without a group both are plain linear layers.
// Under sequence parallelism (BlockContext::sequence_parallel) the sums are reduce-scatters
// into this rank's stream rows: the row-parallel output and the column-parallel input
// gradient hold stream_rows() rows; the column-parallel input and the row-parallel output
// gradient are whole (the caller gathers them).
#pragma once

#include "core/decoder/block.h"

namespace llmft {

// out(N, OC) = sum over the group of inp(N, C/tp) @ weight(OC, C/tp)^T, + bias once (out:
// this rank's stream rows of it).
void row_parallel_forward(const BlockContext& ctx, Tensor out, Tensor inp, Tensor weight,
                          Tensor bias);

// dinp(N, C) = sum over the group of dout(N, OC/tp) @ weight(OC/tp, C) (overwritten; dinp:
// this rank's stream rows of it);
// dweight, dbias (if defined) accumulate this rank's rows. The sum is started before the
// weight gradient is computed, so the two overlap.
void column_parallel_backward(const BlockContext& ctx, Tensor dinp, Tensor dweight, Tensor dbias,
                              Tensor dout, Tensor inp, Tensor weight);

}  // namespace llmft
