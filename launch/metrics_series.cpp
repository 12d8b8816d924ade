#include "launch/metrics_series.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace llmft {
namespace {

std::string without_jsonl(const std::string& path) {
  const std::string suffix = ".jsonl";
  const bool has = path.size() > suffix.size() &&
                   path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return has ? path.substr(0, path.size() - suffix.size()) : path;
}

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// Adds the step lines of `path` to `series`; returns how many it had.
size_t read_file(const std::string& path, const std::vector<std::string>& numeric_keys,
                 MetricsSeries& series) {
  std::ifstream in(path);
  LLMFT_REQUIRE(in, "cannot read metrics file " << path << ": " << std::strerror(errno)
                                                << " (give the file --metrics wrote)");
  size_t steps = 0;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (blank(line)) continue;
    try {
      io::Json metrics = io::Json::parse(line);
      LLMFT_REQUIRE(metrics.is_object(), "a metrics line is a JSON object, this is "
                                             << io::Json::kind_name(metrics.kind()));
      const io::Json* step = metrics.find("step");
      if (step == nullptr) continue;
      for (const std::string& key : numeric_keys) metric_value(metrics, key);
      series.by_step[step->as_int()] = std::move(metrics);
      ++steps;
    } catch (const Error& e) {
      LLMFT_FAIL("metrics file " << path << ":" << number << ": " << e.what());
    }
  }
  LLMFT_REQUIRE(!in.bad(), "cannot read metrics file " << path << ": " << std::strerror(errno));
  return steps;
}

}  // namespace

std::optional<double> metric_value(const io::Json& metrics, const std::string& key) {
  const io::Json* value = metrics.find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  LLMFT_REQUIRE(value->is_number(), "\"" << key << "\" is a " << io::Json::kind_name(value->kind())
                                         << ", not a number");
  return value->as_number();
}

MetricsSeries read_metrics_series(const std::vector<std::string>& files,
                                  const std::vector<std::string>& numeric_keys) {
  MetricsSeries series;
  std::string names;
  size_t steps = 0;
  for (const std::string& file : files) {
    series.label += (series.label.empty() ? "" : "+") + without_jsonl(file);
    names += (names.empty() ? "" : ", ") + file;
    steps += read_file(file, numeric_keys, series);
  }
  LLMFT_REQUIRE(steps > 0, "metrics file " << names
                                           << " has no step lines (give the file --metrics "
                                              "wrote: a line per logged step)");
  return series;
}

}  // namespace llmft
