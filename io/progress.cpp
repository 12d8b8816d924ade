#include "io/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/byte_size.h"
#include "core/duration_text.h"
#include "core/model_config.h"

namespace llmft::io {
namespace {

ProgressSettings& settings_slot() {
  static ProgressSettings settings;
  return settings;
}

void write_stderr(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_count(double value, const ProgressCount& count) {
  switch (count.kind) {
    case ProgressCount::Kind::bytes:
      return format_bytes(value);
    case ProgressCount::Kind::parameters:
      return parameter_count_text(value);
    case ProgressCount::Kind::items:
      return std::to_string(std::llround(value));
  }
  return {};
}

int percent_of(uint64_t done, uint64_t total) {
  return total == 0 ? 100 : static_cast<int>(static_cast<double>(done) * 100 / total);
}

}  // namespace

ProgressSettings progress_settings_for(bool quiet, bool prints, double interval_s) {
  ProgressSettings settings;
  settings.interval_s = interval_s;
  if (quiet || !prints) {
    settings.mode = ProgressMode::off;
  } else {
    settings.mode = isatty(fileno(stderr)) ? ProgressMode::live : ProgressMode::periodic;
  }
  return settings;
}

void set_progress_settings(const ProgressSettings& settings) {
  settings_slot() = settings;
}

const ProgressSettings& progress_settings() {
  return settings_slot();
}

Progress::Progress(std::string operation, uint64_t total, ProgressCount count)
    : Progress(std::move(operation), total, std::move(count), progress_settings(), write_stderr,
               steady_seconds) {}

Progress::Progress(std::string operation, uint64_t total, ProgressCount count,
                   const ProgressSettings& settings, Sink sink, Clock clock)
    : operation_(std::move(operation)),
      total_(total),
      count_(std::move(count)),
      settings_(settings),
      sink_(std::move(sink)),
      clock_(std::move(clock)) {
  phase_started_s_ = last_line_s_ = clock_();
}

Progress::~Progress() {
  finish();
}

void Progress::update(uint64_t done) {
  if (finished_ || settings_.mode == ProgressMode::off) return;
  done_ = std::min(done, total_);
  const double now = clock_();
  if (settings_.mode == ProgressMode::live) {
    emit_live(now);
  } else {
    emit_periodic(now);
  }
}

void Progress::next_phase(std::string operation, uint64_t total) {
  print_done_line();
  operation_ = std::move(operation);
  total_ = total;
  done_ = 0;
  last_percent_ = -1;
  phase_started_s_ = clock_();
  update(0);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (live_width_ > 0) {
    sink_("\r" + std::string(live_width_, ' ') + "\r");
    live_width_ = 0;
  }
  print_done_line();
}

void Progress::print_done_line() {
  if (!printed_periodic_) return;
  printed_periodic_ = false;
  sink_(operation_ + ": done, " + counted(done_) + " in " +
        duration_text(clock_() - phase_started_s_) + "\n");
}

std::string Progress::counted(uint64_t value) const {
  const std::string number = format_count(static_cast<double>(value), count_);
  return count_.kind == ProgressCount::Kind::bytes ? number : number + " " + count_.noun;
}

std::string Progress::status_text(double now) const {
  const int percent = percent_of(done_, total_);
  std::string text = operation_ + ": " + std::to_string(percent) + "% (" +
                     format_count(static_cast<double>(done_), count_) + " of " + counted(total_) +
                     "), " + duration_text(now - phase_started_s_);
  // The rest of the phase at its rate so far, once there is a rate to speak of.
  const double phase_elapsed = now - phase_started_s_;
  if (done_ > 0 && done_ < total_ && phase_elapsed >= 1) {
    const double left = phase_elapsed * static_cast<double>(total_ - done_) / done_;
    text += ", about " + duration_text(left) + " left";
  }
  return text;
}

void Progress::emit_live(double now) {
  const int percent = percent_of(done_, total_);
  if (percent == last_percent_ && now - last_line_s_ < 1) return;
  last_percent_ = percent;
  last_line_s_ = now;
  const std::string text = status_text(now);
  // Blank out what is left of a longer previous line.
  const size_t pad = live_width_ > text.size() ? live_width_ - text.size() : 0;
  sink_("\r" + text + std::string(pad, ' '));
  live_width_ = std::max(live_width_, text.size());
}

void Progress::emit_periodic(double now) {
  const int percent = percent_of(done_, total_);
  const bool due = settings_.interval_s <= 0 ? percent != last_percent_
                                             : now - last_line_s_ >= settings_.interval_s;
  if (!due) return;
  last_percent_ = percent;
  last_line_s_ = now;
  printed_periodic_ = true;
  sink_(status_text(now) + "\n");
}

}  // namespace llmft::io
