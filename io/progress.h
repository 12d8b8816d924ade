// Progress of one long operation (tokenizing a corpus, loading weights, writing or reading
// a checkpoint, calibrating, exporting) on stderr, for a person at a terminal and for a
// batch log:
//  - live (stderr is a terminal): one line rewritten in place as the percentage moves,
//    erased when the operation ends (the command's own summary line follows);
//  - periodic (stderr is a file or a pipe): a plain line once the operation has run for
//    the interval and then at most once per interval, and a last "done" line when any
//    was printed (one per phase), so short operations leave nothing; no control characters;
//  - off: with --quiet, and on every rank but 0.
// Lines read "loading weights: 45% (495M of 1.1B parameters), 12s, about 15s left".
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace llmft::io {

enum class ProgressMode { off, live, periodic };

struct ProgressSettings {
  ProgressMode mode = ProgressMode::off;
  double interval_s = 10;  // seconds between periodic lines (0: at every new percentage)
};

// Live on a terminal (stderr), else periodic; off when quiet or when this process does not
// print (ranks other than 0).
ProgressSettings progress_settings_for(bool quiet, bool prints, double interval_s);

// The settings every Progress made without its own follows; off until a command sets them
// (launch/command_line.cpp does, from --quiet and --progress-every).
void set_progress_settings(const ProgressSettings& settings);
const ProgressSettings& progress_settings();

// What is counted: bytes ("1.50 GiB"), parameters ("1.1B") or items of a noun ("3 of
// 4 stages").
struct ProgressCount {
  enum class Kind { bytes, parameters, items };
  Kind kind = Kind::items;
  std::string noun = "items";

  static ProgressCount bytes() { return {Kind::bytes, "bytes"}; }
  static ProgressCount parameters() { return {Kind::parameters, "parameters"}; }
  static ProgressCount items(std::string noun) { return {Kind::items, std::move(noun)}; }
};

class Progress {
 public:
  using Clock = std::function<double()>;                 // seconds, monotonic
  using Sink = std::function<void(const std::string&)>;  // writes the text as it is

  // On stderr with the process-wide settings and the steady clock.
  Progress(std::string operation, uint64_t total, ProgressCount count);
  // With its own settings, output and clock (tests).
  Progress(std::string operation, uint64_t total, ProgressCount count,
           const ProgressSettings& settings, Sink sink, Clock clock);
  ~Progress();  // finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of the total so far (clamped to it).
  void update(uint64_t done);
  void advance(uint64_t more) { update(done_ + more); }
  // A new phase of the same operation ("prepare: reading" then "prepare: encoding"),
  // counted from 0 of `total` with its own elapsed time; ends the last phase's report.
  void next_phase(std::string operation, uint64_t total);
  // Ends the report: erases a live line, prints the periodic "done" line. Idempotent.
  void finish();

 private:
  std::string counted(uint64_t value) const;  // "1.20 GiB", "3 stages"
  std::string status_text(double now) const;
  void emit_live(double now);
  void emit_periodic(double now);
  void print_done_line();  // the phase's "done" line, when a periodic line of it was printed

  std::string operation_;
  uint64_t total_;
  ProgressCount count_;
  ProgressSettings settings_;
  Sink sink_;
  Clock clock_;
  double phase_started_s_ = 0, last_line_s_ = 0;
  uint64_t done_ = 0;
  int last_percent_ = -1;
  size_t live_width_ = 0;          // characters of the live line on screen; 0: none
  bool printed_periodic_ = false;  // a periodic line of this phase was printed
  bool finished_ = false;
};

}  // namespace llmft::io
