// The llmft release this build is (CMake's project version), recorded in checkpoints.
#pragma once

namespace llmft {

const char* llmft_version();

}  // namespace llmft
