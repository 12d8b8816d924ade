// Which BLAS library and kernel the CPU backend's matrix products run on, and the fix for
// OpenBLAS builds that do not know the CPU. Debian's OpenBLAS (DYNAMIC_ARCH) picks its
// kernel when it loads; on a CPU model it does not recognise it falls back to its generic
// Prescott kernel, about 4x slower than the AVX2 one. So, once per process and before any
// BLAS call, select_blas_kernel() checks what OpenBLAS picked: when that is the generic
// kernel on a CPU with AVX-512 or AVX2 it makes OpenBLAS load the matching kernel
// (SkylakeX; Zen on AMD, Haswell otherwise) instead. An OPENBLAS_CORETYPE the user set
// always wins: some machines set it on purpose.
#pragma once

#include <string>

namespace llmft::cpu {

// What the CPU offers (and the OS enables) that decides the kernel.
struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512 = false;  // F, BW, VL, DQ and CD: what OpenBLAS's SkylakeX kernel uses
  bool amd = false;
};
CpuFeatures this_cpu();

// The kernel to switch to, or "" to keep `detected` (OpenBLAS's name for the kernel it
// picked, e.g. "Prescott"). `user_set`: OPENBLAS_CORETYPE is set in the environment.
std::string better_blas_kernel(const std::string& detected, const CpuFeatures& cpu, bool user_set);

struct BlasReport {
  std::string library;  // e.g. "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Zen MAX_THREADS=64"
  std::string kernel;   // what runs now, e.g. "Zen"
  std::string how;      // why that kernel, for the log
};

// Applies the choice above on the first call and returns what runs; later calls return
// the first call's report. Call it before any BLAS call (CpuBackend's constructor does).
const BlasReport& select_blas_kernel();
// select_blas_kernel()'s report in one line, as the training log and --version print it:
// "LIBRARY; kernel KERNEL (HOW)".
std::string blas_description();

// Makes OpenBLAS load `kernel` (an OPENBLAS_CORETYPE name) now, leaving the environment
// as it was. Returns false, changing nothing, when this OpenBLAS cannot switch kernels
// (no DYNAMIC_ARCH entry points). No BLAS call may run concurrently.
bool switch_blas_kernel(const std::string& kernel);

// The kernel OpenBLAS runs now.
std::string blas_kernel();

}  // namespace llmft::cpu
