// Events of the CPU backend: its kernels and collectives run on the host, in call order,
// so an event is reached when it is recorded. It keeps the time of that moment.
#pragma once

#include <chrono>

#include "core/backend.h"

namespace llmft {

struct CpuEvent : Event {
  std::chrono::steady_clock::time_point at{};
};

}  // namespace llmft
