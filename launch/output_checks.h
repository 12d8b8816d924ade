// The outputs of a subcommand checked at startup, before any work: no output is a file the
// job reads (io/output_path.h), no renamed-over output is a device or other special node
// (io/atomic_file.h), and no output directory is one whose files the job reads.
#pragma once

#include <string>
#include <vector>

#include "io/output_path.h"
#include "launch/command_line.h"
#include "launch/train_options.h"

namespace llmft {

// `path` (named by `option`), which llmft will replace by renaming a finished file over
// it: not one of `inputs` and not a special node. Errors name the option.
void check_replaced_output(const std::string& path, const std::string& option,
                           const std::vector<io::NamedInput>& inputs);

// The files the tokenizer `spec` (--tokenizer: byte, bpe:PATH or PATH) may read, named by
// `option`: PATH, and the tokenizer files there are in its directory.
std::vector<io::NamedInput> tokenizer_inputs(const std::string& spec, const std::string& option);

// Training's outputs against its inputs (--data, --val-data, --config, --model, --init-from,
// --resume): --metrics and --plan-json are none of them, --save-dir is not where --model or
// --init-from is read from, and --save-dir is not --checkpoint-dir. `values` holds --config.
void check_train_outputs(const TrainOptions& o, const po::variables_map& values);

}  // namespace llmft
