// The main() of llmft's helper programs (benchmarks, test dumpers): runs `body` and turns
// an exception into "PROGRAM: error: ..." on stderr and exit code 1.
#pragma once

namespace llmft {

int guarded_main(const char* program, int (*body)(int, char**), int argc, char** argv);

}  // namespace llmft
