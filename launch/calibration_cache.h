// The calibration cache: what a job measured on its devices (parallel/planner/
// calibration.h), kept in a file keyed by host, device, dtype and world size so that later
// jobs on the same machines skip the benchmarks (`--no-calibrate` uses the presets alone).
//
// The cache is a small JSON file:
//   {"version": 6,
//    "entries": {"HOST/DEVICE/DTYPE/WORLD/THREADS": {"device": "h100-80g", "gemm_flops": 6.1e14,
//        "gemm_half_rate_rows": 48, "gemm_size": 8192,
//        "measured_at": "2026-12-03T17:05:00Z", "load_average": 0.4, "online_cpus": 64,
//        "intra_node": {"all_reduce": {"bandwidth": 3.6e11, "latency_s": 1.2e-5},
//                       "reduce_scatter": {...}, "all_gather": {...}},
//        "inter_node": {...}, "memory_bandwidth": 3.1e12, "kernel_call_s": 4e-6}}}
// A link whose all-reduce bandwidth is 0 (a one-node job has no inter-node link) was not
// measured.
// A file of another version is measured again and replaced. gemm_size is the probe's shape
// (calibration.h); measured_at, load_average and online_cpus say when and under what load
// the entry was measured.
//
// Thread-safety: the functions share no state; concurrent writers of one cache file (jobs
// starting together on a shared home directory) each replace it whole through a temp file
// of their own (io::write_shared_file_atomically), so the last one wins.
#pragma once

#include <optional>
#include <string>

#include "io/json.h"
#include "parallel/planner/calibration.h"

namespace llmft {

// A link as {"all_reduce": rate, "reduce_scatter": rate, "all_gather": rate}, each rate
// {"bandwidth": bytes/s, "latency_s": seconds}, in the cache and in plan JSON.
io::Json link_json(const Link& link);

// "HOST/DEVICE/DTYPE/WORLD/THREADS", the cache's key for a job of `world` ranks launched
// from `host` on `device` (the preset, e.g. "cpu" or "h100-80g"), computing in `dtype`,
// with `threads` per rank (0: the default, every core).
std::string calibration_key(const std::string& host, const std::string& device, DType dtype,
                            int world, int threads);
// This machine's host name.
std::string this_host();
// $LLMFT_CALIBRATION_CACHE, else $XDG_CACHE_HOME/llmft/calibration.json, else
// $HOME/.cache/llmft/calibration.json.
std::string default_calibration_path();

// The entry under `key`; nullopt when the file or the entry does not exist. A file that
// is not a calibration cache is an Error naming it.
std::optional<Calibration> read_calibration(const std::string& path, const std::string& key);
// Adds or replaces the entry under `key`, keeping the others, and writes the file
// atomically (creating its directory).
void write_calibration(const std::string& path, const std::string& key,
                       const Calibration& calibration);

// Records in `calibration` the time now (UTC), this machine's 1-minute load average
// (/proc/loadavg; -1 where it cannot be read) and its online CPUs.
void record_conditions(Calibration& calibration);
// "2026-12-03T17:05:00Z, load 0.40 on 64 CPUs": when and under what load it was measured.
std::string conditions_text(const Calibration& calibration);

}  // namespace llmft
