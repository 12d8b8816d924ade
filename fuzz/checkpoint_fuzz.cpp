// Fuzz target: restoring a training checkpoint (checkpoint/checkpointer.h's resume_from) from
// arbitrary bytes. The reference is a tiny LLaMA (bf16 weights, f32 masters, AdamW moments)
// whose every tensor holds a fixed pattern; its checkpoint, written by the real writer into
// the target's scratch directory on first use, is the corpus seed (reference_step) and is
// restored and checked first on every run, so a seed the writer has outgrown still leaves
// the accepting path fuzzed. llmft::Error is the expected answer to a damaged file; a file that is
// accepted must restore exactly the reference state — every tensor bit for bit and the
// progress — so no damage can load changed values silently. The mutator is structure-aware:
// besides libFuzzer's byte mutations, it rewrites a root or dataset attribute's text of the
// reference file through HDF5, as a damaged or hand-edited file would hold it.
#include <hdf5.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/checkpointer.h"
#include "core/backend_registry.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "core/unit_pieces.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "parallel/engine.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size)
    __attribute__((weak));

namespace {

using namespace llmft;

constexpr double kTimeoutSeconds = 60;
constexpr const char* kConfig =
    R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 16, "hidden_size": 8,
        "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
        "num_key_value_heads": 1, "max_position_embeddings": 8})";

// A model and its engine: the reference (trained one step) or a fresh one to restore into.
struct Run {
  std::unique_ptr<Backend> backend = make_backend("cpu");
  Allocator allocator{backend->memory(), 0};
  std::unique_ptr<Model> model;
  std::unique_ptr<Engine> engine;

  explicit Run(const ModelConfig& config) {
    model = make_model(config, *backend, allocator);
    EngineOptions options;
    options.dtype = DType::bf16;
    options.optimizer.kind = OptimizerKind::adamw;
    engine = std::make_unique<Engine>(*model, *backend, allocator, options);
  }

  // Every element the engine holds set to exact, distinct values of its dtype (no
  // arithmetic that a CPU could round differently: the seed file must restore the same bits
  // anywhere); the vocabulary's padding rows, which no file holds, stay zero.
  void fill_pattern() {
    uint32_t next = 1;
    for (int u = 0; u < static_cast<int>(model->units().size()); ++u) {
      for (const Engine::Held& held : engine->held(u)) {
        const size_t width = dtype_size(held.tensor.dtype);
        std::vector<uint8_t> bytes(static_cast<size_t>(held.tensor.numel()) * width, 0);
        for (const TensorPiece& piece :
             unit_pieces(model->units()[u], TpSlice{}, held.range, false)) {
          for (int64_t i = piece.local; i < piece.local + piece.count; ++i) {
            const float value = static_cast<float>(next++ % 977) / 1024.0f - 0.25f;
            uint32_t bits;
            std::memcpy(&bits, &value, 4);
            if (width == 2) bits >>= 16;  // bf16: the float's upper half, exact for these values
            std::memcpy(bytes.data() + i * width, &bits, width);
          }
        }
        backend->copy_to_device(held.tensor, bytes.data());
      }
    }
  }

  // Every tensor the engine holds, as bytes, unit by unit.
  std::vector<uint8_t> state() const {
    std::vector<uint8_t> bytes;
    for (int u = 0; u < static_cast<int>(model->units().size()); ++u) {
      for (const Engine::Held& held : engine->held(u)) {
        const size_t size =
            static_cast<size_t>(held.tensor.numel()) * dtype_size(held.tensor.dtype);
        const size_t at = bytes.size();
        bytes.resize(at + size);
        backend->copy_to_host(bytes.data() + at, held.tensor);
      }
    }
    return bytes;
  }
};

struct Reference {
  ModelConfig config;
  CheckpointInfo info;
  std::vector<uint8_t> state;
  Engine::Progress progress;
  std::string path;  // its checkpoint, as the writer wrote it
};

ResumeTarget target_of(const Reference& reference) {
  ResumeTarget target;
  target.config = reference.config;
  target.vocabulary = reference.info.vocabulary;
  target.optimizer = reference.info.optimizer;
  target.dtype = reference.info.dtype;
  target.seed = reference.info.seed;
  target.data = reference.info.data;
  target.seq_len = reference.info.seq_len;
  return target;
}

// Restores `path` into a fresh engine; when accepted, it must be the reference state.
void check_restore(const Reference& reference, const std::string& path) {
  Run run(reference.config);
  CheckpointInfo info;
  try {
    info = resume_from(path, target_of(reference), *run.engine, *run.backend,
                       RankPlace{TpSlice{}, 0, true}, kTimeoutSeconds);
  } catch (const Error&) {
    return;  // refused, as a damaged file should be
  }
  FUZZ_CHECK(run.state() == reference.state);
  const Engine::Progress progress = run.engine->progress();
  FUZZ_CHECK(progress.updates == reference.progress.updates);
  FUZZ_CHECK(progress.loss_scale == reference.progress.loss_scale);
  FUZZ_CHECK(progress.clean_steps == reference.progress.clean_steps);
  FUZZ_CHECK(info.step == reference.info.step &&
             info.windows_consumed == reference.info.windows_consumed);
}

const Reference& reference() {
  static const Reference* made = [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      std::atexit([] { MPI_Finalize(); });
    }
    auto* r = new Reference;
    r->config = io::parse_hf_config(io::Json::parse(kConfig), "the fuzz target's config");
    Run run(r->config);
    run.fill_pattern();
    r->info.llmft_version = "fuzz";
    r->info.step = 1;
    r->info.updates = run.engine->progress().updates;
    r->info.windows_consumed = 2;
    r->info.global_batch = 2;
    r->info.seed = 7;
    r->info.optimizer = "adamw";
    r->info.dtype = "bf16";
    r->info.schedule = R"({"shape":"cosine","lr":0.001,"min_lr":0,"warmup":0,"steps":2})";
    r->info.layout = R"({"ranks":1})";
    r->info.model_config = io::hf_config_json(r->config).dump();
    r->info.vocabulary = "16 tokens";
    r->info.data = "fuzz";
    r->info.seq_len = 7;
    const std::string dir = fuzz::ScratchDir::get().path("reference");
    std::filesystem::create_directories(dir);
    Checkpointer(dir, 0, kTimeoutSeconds, true)
        .save(*run.engine, *run.backend, RankPlace{TpSlice{}, 0, true}, r->info);
    r->path = dir + "/step_00000001.h5";
    r->state = run.state();
    r->progress = run.engine->progress();
    // The writer's own file restores the reference: the accepting path is real.
    Run restored(r->config);
    resume_from(r->path, target_of(*r), *restored.engine, *restored.backend,
                RankPlace{TpSlice{}, 0, true}, kTimeoutSeconds);
    FUZZ_CHECK(restored.state() == r->state);
    return r;
  }();
  return *made;
}

// The names of the attributes of `object` (the file's root or a dataset).
std::vector<std::string> attribute_names(hid_t object) {
  std::vector<std::string> names;
  H5Aiterate2(
      object, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

// Replaces attribute `name` of `object` with `text` (a fixed-length string, as llmft writes).
void set_text(hid_t object, const std::string& name, const std::string& text) {
  H5Adelete(object, name.c_str());
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, std::max<size_t>(text.size(), 1));
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  const std::string stored = text.empty() ? std::string(1, '\0') : text;
  if (attribute >= 0) {
    H5Awrite(attribute, type, stored.data());
    H5Aclose(attribute);
  }
  H5Sclose(space);
  H5Tclose(type);
}

std::string read_text(hid_t object, const std::string& name) {
  const hid_t attribute = H5Aopen(object, name.c_str(), H5P_DEFAULT);
  const hid_t type = H5Aget_type(attribute);
  std::string text(H5Tget_size(type), '\0');
  H5Aread(attribute, type, text.data());
  H5Tclose(type);
  H5Aclose(attribute);
  return text;
}

// Writes into `data` the reference checkpoint with one attribute's text mutated. It starts
// from the writer's own file, never from a byte-mutated one: HDF5 itself is not hardened
// against damaged files that it is asked to modify (H5Aiterate2 crashes on some).
size_t mutate_attribute(uint8_t* data, size_t max_size, unsigned seed) {
  static const std::vector<char> pristine = [] {
    std::ifstream in(reference().path, std::ios::binary);
    return std::vector<char>{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }();
  const std::string path = fuzz::ScratchDir::get().write(
      "mutating.h5", reinterpret_cast<const uint8_t*>(pristine.data()), pristine.size());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return 0;
  std::mt19937 random(seed);
  // The root's attributes, or one dataset's ("dtype", "digest").
  hid_t object = file;
  std::vector<std::string> datasets;
  H5Ovisit2(
      file, H5_INDEX_NAME, H5_ITER_NATIVE,
      [](hid_t, const char* name, const H5O_info_t* info, void* out) -> herr_t {
        if (info->type == H5O_TYPE_DATASET) {
          static_cast<std::vector<std::string>*>(out)->push_back(name);
        }
        return 0;
      },
      &datasets, H5O_INFO_BASIC);
  if (!datasets.empty() && random() % 2 == 0) {
    object = H5Dopen2(file, datasets[random() % datasets.size()].c_str(), H5P_DEFAULT);
  }
  const std::vector<std::string> names = attribute_names(object);
  if (!names.empty()) {
    const std::string name = names[random() % names.size()];
    std::string text = read_text(object, name);
    text.resize(text.size() + 16);
    text.resize(
        LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(text.data()), text.size() - 16, text.size()));
    set_text(object, name, text);
  }
  if (object != file) H5Dclose(object);
  H5Fclose(file);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  if (bytes.empty() || bytes.size() > max_size) return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Reference& r = reference();
  check_restore(r, fuzz::ScratchDir::get().write("step_00000001.h5", data, size));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 2 == 0) {
    const size_t mutated = mutate_attribute(data, max_size, seed);
    if (mutated > 0) return mutated;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
