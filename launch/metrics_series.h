// MetricsSeries: the step lines of one run's --metrics JSONL, read for `llmft plot`. A
// run resumed into the same file, or continued in further files, is joined by step: a step
// logged twice keeps its last line. Lines without a "step" (a header) are skipped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/json.h"

namespace llmft {

struct MetricsSeries {
  std::string label;                    // the files' names without ".jsonl", joined by "+"
  std::map<int64_t, io::Json> by_step;  // each step's metrics object, in step order
};

// Reads `files` (one run, in order) into one series. Throws llmft::Error naming the file
// (and line) that cannot be read, holds a line that is no JSON object, a "step" that is no
// integer or one of `numeric_keys` that is no number, or, once all are read, when no file
// has a step line.
// REQUIRES: !files.empty()
MetricsSeries read_metrics_series(const std::vector<std::string>& files,
                                  const std::vector<std::string>& numeric_keys);

// The number `key` holds in `metrics`, or none when absent or null (NaN is written as
// null). Throws llmft::Error naming the key when it holds anything else.
std::optional<double> metric_value(const io::Json& metrics, const std::string& key);

}  // namespace llmft
