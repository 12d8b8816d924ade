// The gnuplot program `llmft plot` runs: a page of six panels (training and validation
// loss, learning rate, gradient norm, throughput, worst rank's peak memory with its
// prediction) over the steps of each series, drawn as PNG and as SVG. The data travels
// inside the program as datablocks, so gnuplot reads no other file.
#pragma once

#include <string>
#include <vector>

#include "launch/metrics_series.h"

namespace llmft {

// The metrics keys the panels draw: read_metrics_series checks they hold numbers.
std::vector<std::string> plotted_metrics();

// The program that writes `png_path` and `svg_path` from `series` (each a labelled curve
// in its own colour, the same in every panel; every panel spans the same steps). A panel no
// series has data for says so.
// REQUIRES: every series has a step
std::string plot_script(const std::vector<MetricsSeries>& series, const std::string& png_path,
                        const std::string& svg_path);

}  // namespace llmft
