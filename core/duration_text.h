// Human-readable durations for the logs: "42s", "3m05s", "2h07m" (step lines' elapsed time
// and ETA, progress lines).
#pragma once

#include <string>

namespace llmft {

// `seconds` rounded to whole seconds (negative as 0): seconds below a minute, minutes and
// seconds below an hour, then hours and minutes.
std::string duration_text(double seconds);

}  // namespace llmft
