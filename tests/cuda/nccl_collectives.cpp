// The NCCL communicator under mpiexec, one rank per visible GPU: every collective in every
// dtype gives what the MPI communicator gives on host copies of the same data (values
// whose sums are exact in bf16 and fp16, so any summation order agrees), a sum waited for
// on the device is what later compute-stream work reads, two large
// all-reduces queued back to back both complete with the right sums, and a rank that
// never joins a collective ends the others' wait with the timeout error, naming the
// collective and the group (with two GPUs or more; on one, a collective held behind a
// stalled compute stream ends its wait the same way, and the communicator is aborted, with
// every group split from it with shared resources, each naming the group that failed). A
// communicator warmed before the backend reserves its slab has its buffers measured (the
// communicator overhead), and collectives of every size then allocate no more device memory. Where
// no GPU can run (no driver, no device, a build without CUDA) every rank reports the program
// skipped (exit 77).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/failure_notice.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
#include "comm/nccl_communicator.h"
#include "core/backend_registry.h"
#include "core/error.h"
#include "core/float_traits.h"
#include "core/host_convert.h"

namespace llmft {
namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::bf16, DType::f16};
MpiRuntime* runtime = nullptr;

std::unique_ptr<Backend> gpu() {
  return make_backend("cuda",
                      NodePlacement{runtime->local_rank(), runtime->local_size(), false, {}, {}},
                      size_t{256} << 20);
}

// Small multiples of 0.5: every dtype holds them, and their sums over a few ranks.
std::vector<float> exact_values(int rank, int n) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = static_cast<float>((rank * 7 + i) % 11 - 5) * 0.5f;
  return values;
}

// A device tensor of `values` in `dtype`, in memory of `backend`.
struct DeviceTensor {
  Buffer buffer;
  Tensor tensor;
  DeviceTensor(Allocator& alloc, Backend& backend, DType dtype, const std::vector<float>& values)
      : buffer(alloc.allocate(values.size() * dtype_size(dtype), MemoryCategory::other, "test")),
        tensor(buffer.as(dtype, {static_cast<int64_t>(values.size())})) {
    const std::vector<uint8_t> bytes = to_dtype_bytes(values.data(), values.size(), dtype);
    backend.copy_to_device(tensor, bytes.data());
  }
  std::vector<float> values(Backend& backend) const {
    std::vector<uint8_t> bytes(tensor.bytes());
    backend.copy_to_host(bytes.data(), tensor);
    return from_dtype_bytes(bytes, tensor.dtype);
  }
};

// The same values on the host, as the MPI communicator takes them.
struct HostTensor {
  std::vector<uint8_t> bytes;
  Tensor tensor;
  HostTensor(DType dtype, const std::vector<float>& values)
      : bytes(to_dtype_bytes(values.data(), values.size(), dtype)),
        tensor(bytes.data(), dtype, {static_cast<int64_t>(values.size())}) {}
  std::vector<float> values() const { return from_dtype_bytes(bytes, tensor.dtype); }
};

TEST_CASE("NCCL collectives give the MPI communicator's results") {
  std::unique_ptr<Backend> backend = gpu();
  auto& cuda = dynamic_cast<CudaBackend&>(*backend);
  Allocator alloc(backend->memory(), 0);
  NcclCommunicator nccl(MPI_COMM_WORLD, cuda, 60);
  MpiCommunicator mpi(MPI_COMM_WORLD, 60);
  const int size = mpi.size(), rank = mpi.rank(), n = 12;
  for (DType dtype : kFloatTypes) {
    CAPTURE(std::string(dtype_name(dtype)));
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      DeviceTensor d(alloc, *backend, dtype, exact_values(rank, size * n));
      HostTensor h(dtype, exact_values(rank, size * n));
      nccl.all_reduce(d.tensor, op)->wait();
      mpi.all_reduce(h.tensor, op)->wait();
      CHECK(d.values(*backend) == h.values());
    }
    DeviceTensor send(alloc, *backend, dtype, exact_values(rank, size * n));
    DeviceTensor recv(alloc, *backend, dtype, std::vector<float>(n, 0.0f));
    HostTensor host_send(dtype, exact_values(rank, size * n)),
        host_recv(dtype, std::vector<float>(n, 0.0f));
    nccl.reduce_scatter(send.tensor, recv.tensor)->wait();
    mpi.reduce_scatter(host_send.tensor, host_recv.tensor)->wait();
    CHECK(recv.values(*backend) == host_recv.values());

    DeviceTensor block(alloc, *backend, dtype, exact_values(rank, n));
    DeviceTensor all(alloc, *backend, dtype, std::vector<float>(size * n, 0.0f));
    nccl.all_gather(block.tensor, all.tensor)->wait();
    std::vector<float> expected;
    for (int r = 0; r < size; ++r) {
      const std::vector<float> part = HostTensor(dtype, exact_values(r, n)).values();
      expected.insert(expected.end(), part.begin(), part.end());
    }
    CHECK(all.values(*backend) == expected);

    DeviceTensor data(alloc, *backend, dtype, exact_values(rank, n));
    nccl.broadcast(data.tensor, size - 1)->wait();
    CHECK(data.values(*backend) == HostTensor(dtype, exact_values(size - 1, n)).values());
  }
  CHECK(nccl.counters()[static_cast<int>(Collective::all_reduce)].calls == 6);
  // Two large all-reduces queued before either is waited for: on several ranks NCCL may
  // still be enqueueing the first (ncclInProgress) when the second is called.
  const int big = 1 << 20;
  DeviceTensor first(alloc, *backend, DType::f32, exact_values(rank, big));
  DeviceTensor second(alloc, *backend, DType::f32, exact_values(rank + 1, big));
  std::unique_ptr<CommRequest> first_sum = nccl.all_reduce(first.tensor, ReduceOp::sum);
  std::unique_ptr<CommRequest> second_sum = nccl.all_reduce(second.tensor, ReduceOp::sum);
  first_sum->wait();
  second_sum->wait();
  std::vector<float> first_expected(big, 0.0f), second_expected(big, 0.0f);
  for (int r = 0; r < size; ++r) {
    const std::vector<float> a = exact_values(r, big), b = exact_values(r + 1, big);
    for (int i = 0; i < big; ++i) first_expected[i] += a[i], second_expected[i] += b[i];
  }
  CHECK(first.values(*backend) == first_expected);
  CHECK(second.values(*backend) == second_expected);
  std::unique_ptr<Communicator> half = nccl.split(rank % 2, rank);
  DeviceTensor one(alloc, *backend, DType::f32, {1.0f});
  half->all_reduce(one.tensor, ReduceOp::sum)->wait();
  CHECK(one.values(*backend)[0] == static_cast<float>(half->size()));
}

TEST_CASE("a sum waited for on the device is what later work on the compute stream reads") {
  std::unique_ptr<Backend> backend = gpu();
  Allocator alloc(backend->memory(), 0);
  NcclCommunicator nccl(MPI_COMM_WORLD, dynamic_cast<CudaBackend&>(*backend), 60);
  const int rank = nccl.rank(), size = nccl.size();
  const int n = 1 << 20;
  DeviceTensor t(alloc, *backend, DType::f32, exact_values(rank, n));
  nccl.all_reduce(t.tensor, ReduceOp::sum)->wait_on_device();
  std::vector<float> expected(n, 0.0f);
  for (int r = 0; r < size; ++r) {
    const std::vector<float> part = exact_values(r, n);
    for (int i = 0; i < n; ++i) expected[i] += part[i];
  }
  CHECK(t.values(*backend) == expected);  // a copy on the compute stream, after the sum
}

TEST_CASE("NCCL's buffers, warmed before the slab, are measured, and collectives add none") {
  // cudaMemGetInfo counts whole 2 MiB pages: what the slab's rounding and the device's
  // page granularity may add to or hide from a figure.
  constexpr size_t kPage = size_t{2} << 20;
  std::unique_ptr<Backend> backend = gpu();  // its slab is not reserved yet
  NcclCommunicator nccl(MPI_COMM_WORLD, dynamic_cast<CudaBackend&>(*backend), 60);
  nccl.warm_up(DType::bf16);
  CHECK(nccl.counters()[static_cast<int>(Collective::all_reduce)].calls == 0);
  Allocator alloc(backend->memory(), 0);  // reserves now, measuring the communicator
  const size_t measured = backend->fixed_overhead() + backend->communicator_overhead();
  const size_t before = backend->memory_outside_allocator();
  CHECK(before + kPage >= measured);
  CHECK(before <= measured + kPage);
  const int rank = nccl.rank(), size = nccl.size();
  for (int n : {1 << 10, 1 << 16, 1 << 22}) {
    CAPTURE(n);
    DeviceTensor whole(alloc, *backend, DType::bf16, exact_values(rank, n * size));
    DeviceTensor part(alloc, *backend, DType::bf16, exact_values(rank, n));
    nccl.all_reduce(whole.tensor, ReduceOp::sum)->wait();
    nccl.reduce_scatter(whole.tensor, part.tensor)->wait();
    nccl.all_gather(part.tensor, whole.tensor)->wait();
    nccl.broadcast(whole.tensor, 0)->wait();
  }
  backend->synchronize();
  CHECK(backend->memory_outside_allocator() <= before + kPage);
}

// What an all-reduce of `t` over `nccl` throws while it waits ("(no error)" if it completes).
std::string all_reduce_error(NcclCommunicator& nccl, const Tensor& t) {
  try {
    nccl.all_reduce(t, ReduceOp::sum)->wait();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("a rank that never joins ends the others' NCCL wait with the timeout error") {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size < 2) {
    MESSAGE("one rank: nobody to stay away; needs two GPUs");
    return;
  }
  std::unique_ptr<Backend> backend = gpu();
  Allocator alloc(backend->memory(), 0);
  NcclCommunicator nccl(MPI_COMM_WORLD, dynamic_cast<CudaBackend&>(*backend), 2.0);
  nccl.set_context("step 3");
  if (rank == 0) {
    DeviceTensor t(alloc, *backend, DType::f32, {1.0f});
    CHECK(all_reduce_error(nccl, t.tensor)
              .find("NCCL all_reduce in group world (step 3) did not complete within 2 s") !=
          std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A host function that holds the stream it was queued on for `seconds`.
void CUDART_CB hold_stream(void* seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(*static_cast<double*>(seconds)));
}

TEST_CASE("a collective that cannot start ends its wait with the timeout error, on one GPU") {
  // Each rank alone in a communicator of its own: its compute stream is held for 4 s, so
  // the all-reduce, ordered after compute's work, cannot start within its 2 s timeout.
  std::unique_ptr<Backend> backend = gpu();
  auto& cuda = dynamic_cast<CudaBackend&>(*backend);
  Allocator alloc(backend->memory(), 0);
  NcclCommunicator nccl(MPI_COMM_SELF, cuda, 2.0, "alone");
  nccl.set_context("step 5");
  DeviceTensor t(alloc, *backend, DType::f32, {1.0f});
  static double held_seconds = 4.0;
  REQUIRE(cudaLaunchHostFunc(cuda.compute_stream(), hold_stream, &held_seconds) == cudaSuccess);
  CHECK(all_reduce_error(nccl, t.tensor)
            .find("NCCL all_reduce in group alone (step 5) did not complete within 2 s") !=
        std::string::npos);
  // The aborted communicator refuses further work rather than hanging on it.
  CHECK_THROWS_AS(nccl.all_reduce(t.tensor, ReduceOp::sum), Error);
  backend->synchronize();  // the held stream runs on
}

// What starting an all-reduce of `t` over `group` throws ("(no error)" if it starts).
std::string refusal(Communicator& group, const Tensor& t) {
  try {
    group.all_reduce(t, ReduceOp::sum);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("a group that times out aborts the groups sharing its resources, which name it") {
  // As above, alone on one GPU, but the all-reduce that times out is a split's: the parent
  // and the sibling, split with shared resources, are aborted with it and refuse work,
  // naming the group that failed and why.
  std::unique_ptr<Backend> backend = gpu();
  auto& cuda = dynamic_cast<CudaBackend&>(*backend);
  Allocator alloc(backend->memory(), 0);
  NcclCommunicator nccl(MPI_COMM_SELF, cuda, 2.0, "alone");
  nccl.set_context("step 7");
  std::unique_ptr<Communicator> first = nccl.split(0, 0);
  std::unique_ptr<Communicator> second = nccl.split(0, 0);
  DeviceTensor t(alloc, *backend, DType::f32, {1.0f});
  static double held_seconds = 4.0;
  REQUIRE(cudaLaunchHostFunc(cuda.compute_stream(), hold_stream, &held_seconds) == cudaSuccess);
  std::string error = "(no error)";
  try {
    second->all_reduce(t.tensor, ReduceOp::sum)->wait();
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error.find("NCCL all_reduce in group alone/split2:0 (step 7) did not complete") !=
        std::string::npos);
  for (Communicator* sibling : {static_cast<Communicator*>(&nccl), first.get()}) {
    const std::string refused = refusal(*sibling, t.tensor);
    CAPTURE(refused);
    CHECK(refused.find("was aborted with group alone/split2:0, whose resources it shares: "
                       "NCCL all_reduce in group alone/split2:0 (step 7) did not complete") !=
          std::string::npos);
  }
  CHECK(refusal(*second, t.tensor).find("group alone/split2:0 was aborted: ") != std::string::npos);
  backend->synchronize();  // the held stream runs on
}

}  // namespace
}  // namespace llmft

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  llmft::runtime = &mpi;
  llmft::init_failure_notices();
  const std::string reason = llmft::device_unavailable_reason("cuda");
  if (!reason.empty()) {
    if (mpi.rank() == 0) std::printf("skipped: %s\n", reason.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  const int failed = context.run() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
