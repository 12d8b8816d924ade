// bench_checkpoint_io: how fast a training-state checkpoint is written and read, against
// the same number of bytes written and read with plain sequential POSIX I/O by one rank
// in the same run (what saving a state dict from rank 0 costs). The checkpoint goes
// through the real path: an Engine's state (LOMO: the weights alone, f32 by default; every
// rank its ZeRO-3 shard when there are several), parallel HDF5 with Fletcher32 checksums,
// flushed and renamed (checkpoint/checkpointer.h); reading it back verifies the checksums.
// The page cache is dropped for both files before each read (posix_fadvise), so reads
// come from the disk as far as the kernel allows. bench/checkpoint_io.sh runs 1 and 2 ranks.
//
// usage: mpirun -np N bench_checkpoint_io [--model gpt2-xl] [--dtype fp32]
//                                         [--optimizer lomo] [--dir checkpoint_bench]
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "bench/bench_args.h"
#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/checkpointer.h"
#include "comm/failure_notice.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
#include "core/backend_registry.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "core/version.h"
#include "io/hf_config.h"
#include "io/output_directory.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"
#include "parallel/state_transfers.h"

using namespace llmft;

namespace {

// Drops `path` from the page cache (after flushing it), so the next read goes to disk.
void drop_cached(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  LLMFT_REQUIRE(fd >= 0, "cannot open " << path);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// Writes `bytes` to `path` in 64 MiB sequential writes and flushes it to disk.
void plain_write(const std::string& path, size_t bytes) {
  std::vector<char> chunk(size_t{64} << 20, 1);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  LLMFT_REQUIRE(fd >= 0, "cannot create " << path);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, chunk.data(), std::min(chunk.size(), bytes - done));
    LLMFT_REQUIRE(n > 0, "writing " << path << " failed (is the disk full?)");
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
}

void plain_read(const std::string& path) {
  std::vector<char> chunk(size_t{64} << 20);
  const int fd = ::open(path.c_str(), O_RDONLY);
  LLMFT_REQUIRE(fd >= 0, "cannot open " << path);
  while (::read(fd, chunk.data(), chunk.size()) > 0) {
  }
  ::close(fd);
}

// Bytes of tensor data this rank writes into a checkpoint of `engine`.
size_t bytes_written(const Engine& engine, TpSlice slice, int dp_rank) {
  size_t bytes = 0;
  for (int u = 0; u < static_cast<int>(engine.model().units().size()); ++u) {
    for (const StateTransfer& t :
         state_transfers(engine, u, slice, dp_rank, TransferDirection::write)) {
      bytes += static_cast<size_t>(t.elements()) * dtype_size(t.dtype);
    }
  }
  return bytes;
}

int run(int argc, char** argv) {
  bench::Args args = bench::parse_args(
      argc, argv,
      {{"model", "gpt2-xl"}, {"dtype", "fp32"}, {"optimizer", "lomo"}, {"dir", "checkpoint_bench"}},
      "bench/checkpoint_io.cpp");
  init_failure_notices();
  int ranks = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool lead = rank == 0;
  std::unique_ptr<MpiCommunicator> world;
  if (ranks > 1) world = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, 600);

  const ModelConfig config = io::resolve_model(args["model"]);
  auto backend = make_backend("cpu");
  Allocator alloc(backend->memory(), 0);
  auto model = make_model(config, *backend, alloc);
  EngineOptions options;
  options.dtype = parse_dtype(args["dtype"]);
  options.optimizer.kind = parse_optimizer_kind(args["optimizer"]);
  options.initialize = false;
  options.data_parallel = world.get();
  options.zero_stage = ranks > 1 ? 3 : 0;
  Engine engine(*model, *backend, alloc, options);
  for (int u = 0; u < static_cast<int>(model->units().size()); ++u) {
    std::vector<float> values(static_cast<size_t>(model->units()[u].numel));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 1e-3f * static_cast<float>(i % 977);
    engine.write_params(u, values);
  }

  const std::string dir = args["dir"];
  if (lead) io::prepare_output_directory(dir, "--dir", 0, "the checkpoint");
  const RankPlace place{TpSlice{}, rank, lead};
  CheckpointInfo info;
  info.llmft_version = llmft_version();
  info.step = 1;
  info.optimizer = args["optimizer"];
  info.dtype = dtype_name(options.dtype);
  info.model_config = io::hf_config_json(config).dump();
  info.vocabulary = vocabulary_fingerprint(config.vocab_size, "");
  info.schedule = R"({"shape":"constant","lr":0,"min_lr":0,"warmup":0,"steps":1})";
  info.layout = "{\"ranks\":" + std::to_string(ranks) + "}";
  info.global_batch = 1;
  info.data = "no data: the weights are a pattern";
  info.seq_len = 1;
  size_t bytes = bytes_written(engine, place.slice, rank);
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);

  constexpr double kTimeoutSeconds = 600;
  Checkpointer checkpointer(dir, 1, kTimeoutSeconds, lead);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  const std::string path = checkpointer.save(engine, *backend, place, info);
  MPI_Barrier(MPI_COMM_WORLD);
  const double hdf5_write = MPI_Wtime() - start;
  if (lead) drop_cached(path);
  MPI_Barrier(MPI_COMM_WORLD);
  start = MPI_Wtime();
  const ResumeTarget target{config, info.vocabulary, info.optimizer, info.dtype, 0,
                            false,  info.data,       info.seq_len,   false};
  resume_from(path, target, engine, *backend, place, kTimeoutSeconds);
  MPI_Barrier(MPI_COMM_WORLD);
  const double hdf5_read = MPI_Wtime() - start;

  if (lead) {
    const std::string plain = (std::filesystem::path(dir) / "plain.bin").string();
    start = MPI_Wtime();
    plain_write(plain, bytes);
    const double plain_write_s = MPI_Wtime() - start;
    drop_cached(plain);
    start = MPI_Wtime();
    plain_read(plain);
    const double plain_read_s = MPI_Wtime() - start;
    std::filesystem::remove(plain);
    const double gb = static_cast<double>(bytes) / 1e9;
    const size_t file_bytes = std::filesystem::file_size(path);
    std::printf("%s, %s %s state, %d rank(s): %.2f GB of tensors (file %.2f GB)\n",
                config.name.c_str(), args["optimizer"].c_str(), args["dtype"].c_str(), ranks, gb,
                static_cast<double>(file_bytes) / 1e9);
    std::printf(
        "write: checkpoint %.2f s (%.2f GB/s), plain sequential %.2f s (%.2f GB/s): "
        "%.2fx the plain time\n",
        hdf5_write, gb / hdf5_write, plain_write_s, gb / plain_write_s, hdf5_write / plain_write_s);
    std::printf(
        "read:  checkpoint %.2f s (%.2f GB/s), plain sequential %.2f s (%.2f GB/s): "
        "%.2fx the plain time\n",
        hdf5_read, gb / hdf5_read, plain_read_s, gb / plain_read_s, hdf5_read / plain_read_s);
    std::filesystem::remove(path);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiRuntime mpi(&argc, &argv);
  return guarded_main("bench_checkpoint_io", run, argc, argv);
}
