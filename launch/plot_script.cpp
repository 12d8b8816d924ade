#include "launch/plot_script.h"

#include <algorithm>
#include <sstream>

namespace llmft {
namespace {

// One line of a panel: a metrics key, scaled, named in the key after the series' label.
struct Curve {
  const char* key;
  const char* suffix;
  double scale;
  bool dashed;
};

struct Panel {
  const char* title;
  bool from_zero;  // the y axis starts at 0 (rates and sizes; a loss's scale is its own)
  std::vector<Curve> curves;
};

constexpr double kMiB = 1.0 / (1 << 20);

const std::vector<Panel>& panels() {
  static const std::vector<Panel> table = {
      {"training loss", false, {{"loss", "", 1, false}}},
      {"validation loss", false, {{"val_loss", "", 1, false}}},
      {"learning rate", true, {{"lr", "", 1, false}}},
      {"gradient norm", true, {{"grad_norm", "", 1, false}}},
      {"throughput (tokens/s processed; dashed: loss targets)",
       true,
       {{"tokens_per_s", "", 1, false}, {"target_tokens_per_s", " targets", 1, true}}},
      {"peak memory per rank, the worst rank (MiB; dashed: predicted)",
       true,
       {{"worst_rank_peak_memory_bytes", "", kMiB, false},
        {"predicted_peak_memory_bytes", " predicted", kMiB, true}}},
  };
  return table;
}

// `text` as a gnuplot single-quoted string (a quote inside is doubled).
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// "$s<series>_<key>": the datablock of one series' values of one key.
std::string block_name(size_t series, const std::string& key) {
  return "$s" + std::to_string(series) + "_" + key;
}

// Fewer points than this are marked each (a validation loss every few hundred steps).
constexpr size_t kMarkedPoints = 30;

struct Block {
  std::string text;  // "step value" rows
  size_t points = 0;
};

Block block(const MetricsSeries& series, const Curve& curve) {
  std::ostringstream rows;
  rows.precision(10);
  Block b;
  for (const auto& [step, metrics] : series.by_step) {
    const std::optional<double> value = metric_value(metrics, curve.key);
    if (!value) continue;
    rows << step << " " << *value * curve.scale << "\n";
    ++b.points;
  }
  b.text = rows.str();
  return b;
}

// The plot command of one panel, or a note where no series has its data.
std::string panel_plot(const Panel& panel, const std::vector<MetricsSeries>& series,
                       const std::vector<std::vector<Block>>& blocks, size_t first_curve) {
  std::ostringstream plot;
  plot << "set title " << quoted(panel.title) << "\nset yrange "
       << (panel.from_zero ? "[0:*]" : "[*:*]") << "\n";
  std::string items;
  for (size_t s = 0; s < series.size(); ++s) {
    for (size_t c = 0; c < panel.curves.size(); ++c) {
      const Curve& curve = panel.curves[c];
      const Block& b = blocks[s][first_curve + c];
      if (b.points == 0) continue;
      items += std::string(items.empty() ? "plot " : ", \\\n     ") + block_name(s, curve.key) +
               " using 1:2 with " +
               (b.points < kMarkedPoints ? "linespoints pt 7 ps 0.8" : "lines") + " lw 2 lc " +
               std::to_string(s + 1) + " dt " + (curve.dashed ? "2" : "1") + " title " +
               quoted(series[s].label + curve.suffix);
    }
  }
  if (items.empty()) {
    std::string keys;
    for (const Curve& curve : panel.curves)
      keys += std::string(keys.empty() ? "" : ", ") + curve.key;
    plot << "set label 1 " << quoted("no " + keys + " in these metrics")
         << " at graph 0.5, 0.5 center\nplot [0:1] [0:1] 2 notitle\nunset label 1\n";
  } else {
    plot << items << "\n";
  }
  return plot.str();
}

// "set xrange [first:last]" over every series' steps, so the panels line up.
std::string step_range(const std::vector<MetricsSeries>& series) {
  int64_t first = series.front().by_step.begin()->first;
  int64_t last = series.front().by_step.rbegin()->first;
  for (const MetricsSeries& s : series) {
    first = std::min(first, s.by_step.begin()->first);
    last = std::max(last, s.by_step.rbegin()->first);
  }
  return "set xrange [" + std::to_string(first) + ":" + std::to_string(last) + "]\n";
}

}  // namespace

std::vector<std::string> plotted_metrics() {
  std::vector<std::string> keys;
  for (const Panel& panel : panels()) {
    for (const Curve& curve : panel.curves) keys.emplace_back(curve.key);
  }
  return keys;
}

std::string plot_script(const std::vector<MetricsSeries>& series, const std::string& png_path,
                        const std::string& svg_path) {
  std::ostringstream script;
  std::vector<std::vector<Block>> blocks(series.size());
  for (size_t s = 0; s < series.size(); ++s) {
    for (const Panel& panel : panels()) {
      for (const Curve& curve : panel.curves) {
        blocks[s].push_back(block(series[s], curve));
        script << block_name(s, curve.key) << " << EOD\n" << blocks[s].back().text << "EOD\n";
      }
    }
  }
  std::string page =
      "set multiplot layout 3, 2 title 'llmft plot' font ',14'\n"
      "set xlabel 'step'\nset grid\nset key top right opaque box\nset format y '%g'\n"
      // Room above the curves for the key.
      "set offsets 0, 0, graph 0.2, 0\n" +
      step_range(series);
  size_t first_curve = 0;
  for (const Panel& panel : panels()) {
    page += panel_plot(panel, series, blocks, first_curve);
    first_curve += panel.curves.size();
  }
  page += "unset multiplot\n";
  script << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "  set terminal pngcairo noenhanced size 1400, 1200 font ',11'\n"
            "} else {\n"
            "  set terminal png noenhanced size 1400, 1200\n"
            "}\n"
         << "set output " << quoted(png_path) << "\n"
         << page << "set output\n"
         << "set terminal svg noenhanced size 1400, 1200 font ',11' background 'white'\n"
         << "set output " << quoted(svg_path) << "\n"
         << page << "set output\n";
  return script.str();
}

}  // namespace llmft
