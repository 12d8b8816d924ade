// The run record: what made a training run, written as JSON when `llmft train` starts, so
// that a result can be traced back to it and the run repeated. It holds the effective
// options (command line over --config over defaults, each as the parser holds it, and
// which ones were given), the build (the lines of `llmft --version`), each data file with
// its size and the 64-bit FNV-1a of all its bytes, the plan (the layout as chosen, by hand
// or by --auto-plan, and the steps) and the job (world size, the hosts in rank order, the
// start time in UTC). It is the first line of the --metrics file as {"run_record": {...}},
// run_record.json in the --save-dir and the --checkpoint-dir, and `llmft export` carries it
// on; `llmft train --config run_record.json` starts a run with the recorded options.
#pragma once

#include <string>
#include <vector>

#include "io/json.h"
#include "launch/command_line.h"
#include "launch/train_options.h"
#include "parallel/mesh.h"

namespace llmft {

inline constexpr const char* kRunRecordFile = "run_record.json";

// The record of a run whose parsed options are `values` and whose resolved options (the
// layout, the steps) are `o`, on `hosts` (one per rank). Reads each data file whole.
io::Json run_record(const po::variables_map& values, const TrainOptions& o, const MeshShape& shape,
                    const std::vector<std::string>& hosts);

// The contents of run_record.json: {"run_record": record} and a newline.
std::string run_record_text(const io::Json& record);
// Writes `record` as `dir`/run_record.json, atomically (io/atomic_file.h).
void write_run_record(const std::string& dir, const io::Json& record);

// The run record in `dir`, or null when there is none. Throws llmft::Error naming the
// file when it is not a run record.
io::Json read_run_record(const std::string& dir);

// Whether `text` (a --config file's contents) is a run record rather than an ini file.
bool is_run_record_text(const std::string& text);
// The options the run of the record `text` was given, as ini text for --config. Throws
// llmft::Error when `text` is not a run record.
std::string run_record_config(const std::string& text);

// One line naming where the record's model came from: "trained by llmft X on --data FILE
// (N bytes, fnv1a64 H) for S steps".
std::string run_record_source(const io::Json& record);

}  // namespace llmft
