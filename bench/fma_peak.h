// The CPU's peak rate of fp32 multiply-adds: independent chains of vector FMAs on
// registers, in every OpenMP thread the caller set, with no memory traffic. No product,
// whichever BLAS runs it, can pass it; the CPU benchmarks set their products against it to
// say how much of the machine the BLAS leaves (docs/BENCHMARKS.md).
#pragma once

namespace llmft::bench {

// Best of 3 runs, in GFLOP/s (an FMA counts 2 FLOPs a lane).
double fma_peak_gflops();

// The floats of the vectors it uses (the widest the target has registers for).
int fma_vector_floats();

}  // namespace llmft::bench
