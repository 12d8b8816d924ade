// `llmft plot METRICS.jsonl [MORE.jsonl ...] --out DIR`: one page of a run's curves (loss
// and validation loss, learning rate, gradient norm, throughput, memory) from one or more
// --metrics files side by side, written through gnuplot as DIR/metrics.png and
// DIR/metrics.svg. Each argument is one series; "A.jsonl,B.jsonl" joins the files of a
// resumed run by step. gnuplot draws into a temp directory inside DIR, and the pictures
// are moved into place only when it reported no error, so a failure leaves nothing behind.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/subprocess.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/plot_script.h"

namespace llmft {
namespace {

namespace fs = std::filesystem;

// The metrics arguments come first; the options follow them.
std::pair<std::vector<std::string>, Args> split_metrics_arguments(const Args& args) {
  size_t first_option = 0;
  while (first_option < args.size() && args[first_option].rfind("-", 0) != 0) ++first_option;
  return {std::vector<std::string>(args.begin(), args.begin() + first_option),
          Args(args.begin() + first_option, args.end())};
}

std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1) {
    parts.push_back(text.substr(start, comma - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

// A directory made for the run's scratch files and removed, whatever is in it, at the end.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const fs::path& parent) {
    std::string pattern = (parent / ".plot-XXXXXX").string();
    LLMFT_REQUIRE(mkdtemp(pattern.data()) != nullptr,
                  "--out " << parent.string()
                           << ": cannot create a directory there: " << std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  LLMFT_REQUIRE(out.flush(), "cannot write " << path.string() << ": " << std::strerror(errno));
}

// The first line of gnuplot's stderr that is not a warning ("Warning: empty y range" for a
// constant curve, drawn all the same), or "" when there is none.
std::string first_error_line(const std::string& err) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line.compare(start, 8, "Warning:") == 0) continue;
    return line.substr(start);
  }
  return "";
}

// A few charts take gnuplot well under a second; a stuck one is stopped.
constexpr double kGnuplotTimeoutSeconds = 120;

// Runs gnuplot on `script`; an error when it cannot run, exits non-zero, reports an error
// on stderr or runs past kGnuplotTimeoutSeconds.
void run_gnuplot(const fs::path& script) {
  io::SubprocessResult result;
  try {
    result = io::run_subprocess({"gnuplot", script.string()}, "", kGnuplotTimeoutSeconds);
  } catch (const Error& e) {
    LLMFT_FAIL("llmft plot draws with gnuplot: " << e.what()
                                                 << " (install it: apt-get install gnuplot-nox)");
  }
  const std::string error = first_error_line(result.err);
  LLMFT_REQUIRE(result.exit_status == 0 && error.empty(),
                "gnuplot failed (exit " << result.exit_status << "): " << error);
}

// Draws `series` into `out_dir` (made when missing, and removed again if drawing fails).
void draw(const std::vector<MetricsSeries>& series, const fs::path& out_dir) {
  const bool made = !fs::exists(out_dir);
  std::error_code error;
  fs::create_directories(out_dir, error);
  LLMFT_REQUIRE(!error, "--out " << out_dir.string() << ": cannot create it: " << error.message());
  try {
    ScratchDirectory scratch(out_dir);
    const fs::path script = scratch.path() / "metrics.gp";
    write_text(script, plot_script(series, (scratch.path() / "metrics.png").string(),
                                   (scratch.path() / "metrics.svg").string()));
    run_gnuplot(script);
    for (const char* name : {"metrics.png", "metrics.svg"}) {
      fs::rename(scratch.path() / name, out_dir / name);
    }
  } catch (...) {
    if (made) fs::remove_all(out_dir, error);
    throw;
  }
}

}  // namespace

int run_plot(const Args& args, MpiRuntime& mpi) {
  const auto [metrics_arguments, option_args] = split_metrics_arguments(args);
  std::string out;
  po::options_description options("Plot");
  options.add_options()("out", po::value(&out)->default_value(""),
                        "write metrics.png and metrics.svg into this directory");
  po::variables_map values;
  const std::string usage =
      "usage: llmft plot METRICS.jsonl [MORE.jsonl ...] --out DIR\n"
      "Draws loss, validation loss, learning rate, gradient norm, throughput and peak memory\n"
      "over the steps of each --metrics file (a series each; A.jsonl,B.jsonl joins a resumed\n"
      "run's files by step) with gnuplot, as DIR/metrics.png and DIR/metrics.svg.";
  if (!parse_options(option_args, options, values, usage, mpi.rank() == 0)) return 0;
  if (mpi.rank() != 0) return 0;
  LLMFT_REQUIRE(
      !metrics_arguments.empty(),
      "llmft plot needs a metrics file: llmft plot METRICS.jsonl [MORE.jsonl ...] --out DIR");
  LLMFT_REQUIRE(!out.empty(), "--out is required: the directory for metrics.png and metrics.svg");
  std::vector<MetricsSeries> series;
  for (const std::string& argument : metrics_arguments) {
    series.push_back(read_metrics_series(comma_separated(argument), plotted_metrics()));
  }
  draw(series, out);
  std::printf("plot: wrote %s and %s\n", (fs::path(out) / "metrics.png").c_str(),
              (fs::path(out) / "metrics.svg").c_str());
  return 0;
}

}  // namespace llmft
