#include "core/cpu/blas_kernel.h"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>

extern "C" {
// OpenBLAS's own reports (cblas.h declares them, but only in some versions).
char* openblas_get_corename(void);
char* openblas_get_config(void);
}

namespace llmft::cpu {
namespace {

constexpr const char* kCoreTypeVariable = "OPENBLAS_CORETYPE";
constexpr const char* kGenericKernel = "Prescott";  // what DYNAMIC_ARCH falls back to

// A DYNAMIC_ARCH OpenBLAS re-reads OPENBLAS_CORETYPE when it initialises again; these
// entry points are exported by such builds but declared in no header, so look them up.
using Entry = void (*)();
Entry dynamic_entry(const char* name) {
  return reinterpret_cast<Entry>(dlsym(RTLD_DEFAULT, name));
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

CpuFeatures this_cpu() {
  __builtin_cpu_init();
  CpuFeatures cpu;
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.fma = __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512cd");
  cpu.amd = __builtin_cpu_is("amd");
  return cpu;
}

std::string better_blas_kernel(const std::string& detected, const CpuFeatures& cpu, bool user_set) {
  if (user_set || detected != kGenericKernel) return "";
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2 && cpu.fma) return cpu.amd ? "Zen" : "Haswell";
  return "";
}

std::string blas_kernel() {
  return openblas_get_corename();
}

bool switch_blas_kernel(const std::string& kernel) {
  const Entry quit = dynamic_entry("gotoblas_dynamic_quit");
  const Entry init = dynamic_entry("gotoblas_dynamic_init");
  if (quit == nullptr || init == nullptr) return false;
  const std::optional<std::string> before = environment(kCoreTypeVariable);
  setenv(kCoreTypeVariable, kernel.c_str(), 1);
  quit();
  init();
  if (before) {
    setenv(kCoreTypeVariable, before->c_str(), 1);
  } else {
    unsetenv(kCoreTypeVariable);
  }
  return true;
}

const BlasReport& select_blas_kernel() {
  static const BlasReport report = [] {
    BlasReport r;
    const std::string detected = blas_kernel();
    const std::optional<std::string> user = environment(kCoreTypeVariable);
    const std::string better = better_blas_kernel(detected, this_cpu(), user.has_value());
    if (user) {
      r.how = std::string(kCoreTypeVariable) + "=" + *user + " set in the environment";
    } else if (better.empty()) {
      r.how = "detected by OpenBLAS";
    } else if (switch_blas_kernel(better) && blas_kernel() == better) {
      r.how = "chosen by llmft: OpenBLAS did not recognise this CPU and fell back to its generic " +
              detected + " kernel; set " + kCoreTypeVariable + " to choose another";
    } else {
      r.how =
          "OpenBLAS's generic fallback: it did not recognise this CPU and this build cannot "
          "switch kernels; set " +
          std::string(kCoreTypeVariable) + "=" + better + " for a faster one";
    }
    r.library = openblas_get_config();
    r.kernel = blas_kernel();
    return r;
  }();
  return report;
}

std::string blas_description() {
  const BlasReport& blas = select_blas_kernel();
  return blas.library + "; kernel " + blas.kernel + " (" + blas.how + ")";
}

}  // namespace llmft::cpu
