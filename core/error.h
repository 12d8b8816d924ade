// llmft::Error and the check macros every folder uses to report failures.
//
// Two kinds of failure:
//  - bad user input (options, configs, data files, checkpoints): LLMFT_REQUIRE /
//    LLMFT_FAIL with a message that names the input and what to do about it;
//  - a vendor call that failed (MPI, BLAS, HDF5, CUDA, ...): the vendor's check macro
//    records the expression, file and line.
// Both throw llmft::Error. launch/ catches it once per process and ends the job.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace llmft {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training diverged: a loss, gradient norm or weight became non-finite (or fp16 overflowed
// too many steps in a row). The job ends with kDivergedExitCode, and nothing is saved
// from the non-finite state.
class DivergedError : public Error {
 public:
  using Error::Error;
};
inline constexpr int kDivergedExitCode = 65;

// Builds "what (expr at file:line)" for vendor-call failures.
std::string describe_call_failure(const std::string& what, const char* expr, const char* file,
                                  int line);

}  // namespace llmft

// Throws llmft::Error whose message is the streamed expression `msg`.
#define LLMFT_FAIL(msg)                    \
  do {                                     \
    std::ostringstream llmft_os_;          \
    llmft_os_ << msg;                      \
    throw ::llmft::Error(llmft_os_.str()); \
  } while (0)

// REQUIRES-style check of user input or of a caller's precondition.
#define LLMFT_REQUIRE(cond, msg)  \
  do {                            \
    if (!(cond)) LLMFT_FAIL(msg); \
  } while (0)
