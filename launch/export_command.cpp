// `llmft export`: a training-state checkpoint's weights as a complete Hugging Face model
// directory, as --save-dir writes at the end of training: config.json, the weights
// (model.safetensors, or shards and their index) in the stored dtype unless --export-dtype
// says otherwise (the f32 master weights when the checkpoint has them, rounded, else its
// stored weights), the tokenizer's files with the chat template, and generation_config.json.
#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <utility>

#include "checkpoint/checkpoint_info.h"
#include "checkpoint/checkpointer.h"
#include "checkpoint/engine_state.h"
#include "core/byte_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/directory_lock.h"
#include "io/hdf5_file.h"
#include "io/hf_checkpoint.h"
#include "io/json.h"
#include "io/model_directory_files.h"
#include "io/output_directory.h"
#include "io/progress.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/run_record.h"

namespace llmft {

int run_export(const Args& args, MpiRuntime& mpi) {
  std::string checkpoint, save_dir, max_shard_size, export_dtype, tokenizer, chat_template;
  po::options_description options("Export");
  // clang-format off
  options.add_options()
      ("checkpoint", po::value(&checkpoint)->default_value(""),
       "a checkpoint file (step_N.h5), or a --checkpoint-dir for its newest")
      ("save-dir", po::value(&save_dir)->default_value(""),
       "write the model here (Hugging Face config.json + model.safetensors, or shards + "
       "model.safetensors.index.json when larger than --save-max-shard-size)")
      ("save-max-shard-size", po::value(&max_shard_size)->default_value("50GB"),
       "largest weights file to write (as transformers' max_shard_size)")
      ("export-dtype", po::value(&export_dtype)->default_value(""),
       "dtype of the written weights: fp32, bf16 or fp16 (default: the checkpoint's --dtype)")
      ("tokenizer", po::value(&tokenizer)->default_value(""),
       "the tokenizer the model was trained with, copied into --save-dir: byte, or its "
       "tokenizer.json, vocab.json or directory (tokenizer_config.json and "
       "chat_template.jinja beside it are read too); the checkpoint does not record it")
      ("chat-template", po::value(&chat_template)->default_value(""),
       "a Jinja chat template file to put into tokenizer_config.json (default: the "
       "tokenizer's chat_template.jinja, else its tokenizer_config.json's)");
  // clang-format on
  po::variables_map values;
  const std::string usage =
      "usage: llmft export --checkpoint PATH --save-dir DIR [--tokenizer PATH] [options]";
  if (!parse_options(args, options, values, usage, mpi.rank() == 0)) return 0;
  LLMFT_REQUIRE(!checkpoint.empty(),
                "--checkpoint is required: a step_N.h5 file or the "
                "--checkpoint-dir of a run");
  LLMFT_REQUIRE(!save_dir.empty(), "--save-dir is required: where to write the model");
  const uint64_t max_shard_bytes = parse_byte_size(max_shard_size, "--save-max-shard-size");
  LLMFT_REQUIRE(max_shard_bytes > 0, "--save-max-shard-size must be positive");
  LLMFT_REQUIRE(export_dtype.empty() || export_dtype == "fp32" || export_dtype == "bf16" ||
                    export_dtype == "fp16",
                "--export-dtype " << export_dtype << ": unknown dtype; use fp32, bf16 or fp16");
  constexpr double kFileTimeoutSeconds = 300;  // one process: no other rank to wait for
  const std::string path =
      resolve_resume_path(checkpoint, "", mpi.rank() == 0, "--checkpoint", kFileTimeoutSeconds);
  if (mpi.rank() != 0) return 0;

  io::Hdf5File file = io::Hdf5File::open(path, MPI_COMM_SELF, kFileTimeoutSeconds);
  const CheckpointInfo info = read_info(file);
  const ModelConfig config = checkpoint_model(info, path);
  const std::vector<UnitLayout> units = unit_layouts(config);
  const DType dtype = parse_dtype(export_dtype.empty() ? info.dtype : export_dtype);
  io::ModelDirectoryFiles files = io::model_directory_files(config, tokenizer, chat_template);
  const io::Json record = read_run_record(std::filesystem::absolute(path).parent_path().string());
  if (!record.is_null()) files.files.emplace_back(kRunRecordFile, run_record_text(record));
  const auto read_unit = [&file](const UnitLayout& unit) {
    std::vector<float> values;
    for (int i = 0; i < static_cast<int>(unit.params.size()); ++i) {
      const ParamInfo& p = unit.params[i];
      const std::vector<TensorPiece> whole = {{i, 0, 0, p.numel()}};
      const std::vector<float> read = read_param_f32(file, p, whole, whole);
      values.insert(values.end(), read.begin(), read.end());
    }
    return values;
  };
  // Every value is read and verified before anything is written, so that a damaged
  // checkpoint leaves no --save-dir behind; a unit at a time, so memory stays one unit.
  const auto parameters = static_cast<uint64_t>(total_numel(units));
  io::Progress progress("export: verifying " + path, parameters, io::ProgressCount::parameters());
  for (const UnitLayout& unit : units) {
    read_unit(unit);
    progress.advance(static_cast<uint64_t>(unit.numel));
  }
  // The directory belongs to this export while it writes (io/directory_lock.h).
  io::ensure_directory(save_dir, "--save-dir");
  const io::DirectoryLock lock(save_dir, "--save-dir", "llmft export --checkpoint " + path);
  const bool without_tokenizer = files.tokenizer_dir.empty() && tokenizer != "byte";
  io::HfModelWriter writer(save_dir, config, units, max_shard_bytes, dtype, std::move(files));
  progress.next_phase("export: writing " + save_dir, parameters);
  for (const UnitLayout& unit : units) {
    writer.add_unit(read_unit(unit));
    progress.advance(static_cast<uint64_t>(unit.numel));
  }
  file.close();
  writer.finish();
  progress.finish();
  std::printf("exported %s (step %lld) to %s (%s)\n", path.c_str(),
              static_cast<long long>(info.step), save_dir.c_str(), writer.describe().c_str());
  if (without_tokenizer) {
    std::fprintf(stderr,
                 "export: no --tokenizer, so %s has no tokenizer files; pass the one the model "
                 "was trained with for AutoTokenizer and pipeline() to load it\n",
                 save_dir.c_str());
  }
  return 0;
}

}  // namespace llmft
