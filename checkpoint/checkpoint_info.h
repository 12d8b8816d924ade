// CheckpointInfo: what a checkpoint records besides tensors, as string attributes on the
// file's root (so h5py and h5dump show them as text): the format and llmft version, the
// training progress (step, optimizer updates, loss scaler, data position), what the run
// was (seed, optimizer, dtype, learning-rate schedule, the layout it was written from, the
// data and window length it drew from) and what it trained (the model's config.json, a
// fingerprint of its vocabulary). "info_digest" digests them all (io/value_digest.h), so a
// changed attribute is refused as damage, and every value is checked on reading, errors
// naming the file and the attribute. The attribute "complete" is written last of all; a
// file without it is not a checkpoint.
//
// check_resumable() refuses, before any training, a checkpoint this run cannot continue,
// with the reason and the fix.
#pragma once

#include <cstdint>
#include <string>

#include "core/model_config.h"
#include "io/hdf5_file.h"

namespace llmft {

constexpr int kCheckpointFormat = 2;  // 2: digests of every dataset and of the attributes
constexpr const char* kCompleteAttribute = "complete";

struct CheckpointInfo {
  int format = kCheckpointFormat;
  std::string llmft_version;
  int64_t step = 0;  // optimizer steps taken (the next step is step + 1)
  int updates = 0;   // of them, steps whose update was applied (not skipped on overflow)
  float loss_scale = 1.0f;
  int clean_steps = 0;           // the loss scaler's steps since its last change
  int64_t windows_consumed = 0;  // the data position: training windows drawn so far
  int global_batch = 0;          // windows per step
  uint64_t seed = 0;
  std::string optimizer;     // "adamw", "sgd", "lomo", "adalomo"
  std::string dtype;         // "fp32", "bf16", "fp16"
  std::string schedule;      // JSON: the learning-rate schedule
  std::string layout;        // JSON: ranks, dp, tp, zero, micro_batch, grad_accum
  std::string model_config;  // the model's Hugging Face config.json
  std::string vocabulary;    // fingerprint: "<size> tokens[; tokenizer <hash>]"
  std::string data;          // the training data's fingerprint (data_fingerprint)
  int seq_len = 0;           // tokens per training window
};

// Writes every attribute except "complete".
void write_info(io::Hdf5File& file, const CheckpointInfo& info);
// Throws an Error naming the file when it is not a complete llmft checkpoint of a format
// this build reads.
CheckpointInfo read_info(const io::Hdf5File& file);

// The model a checkpoint holds (its model_config), named after the checkpoint file `path`.
// Throws llmft::Error naming `path` when the config is not a valid model.
ModelConfig checkpoint_model(const CheckpointInfo& info, const std::string& path);

// The vocabulary fingerprint of a model of `vocab_size` tokens whose weights came from
// `init_from` (a Hugging Face directory or file; empty when none): the tokenizer files
// beside them (tokenizer.json, vocab.json, merges.txt), hashed, when there are any.
std::string vocabulary_fingerprint(int vocab_size, const std::string& init_from);

// A token file's fingerprint: its size and a hash of its first and last MiB, which tells
// another file (or the same one rewritten) without reading all of it.
std::string data_fingerprint(const std::string& path);

// What this run is, to compare with a checkpoint's info.
struct ResumeTarget {
  ModelConfig config;
  std::string vocabulary;
  std::string optimizer;
  std::string dtype;
  uint64_t seed = 0;
  bool weights_only = false;  // --resume-weights-only: weights alone, a fresh run on them
  std::string data;           // data_fingerprint of this run's --data
  int seq_len = 0;
  bool new_data = false;  // --resume-new-data: continue the window count on other data
};

// Throws an Error naming `path`, the difference and the fix when the checkpoint holds
// another model or vocabulary, or (unless weights_only) another optimizer, dtype or seed,
// or (unless new_data too) was drawn from other data or another --seq-len.
void check_resumable(const CheckpointInfo& info, const ResumeTarget& run, const std::string& path);

}  // namespace llmft
