// MPI tests of MpiCommunicator, StagedCommunicator and failure notices, run under mpiexec with 1, 2
// and 4 ranks (comm_tests.cmake) with tests/support/mpi_doctest_main.cpp: every rank runs every
// test case in the same order, and checks are CHECKs, never REQUIREs, so that a failed
// check does not make one rank skip a collective the others enter.
#include <doctest/doctest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/failure_notice.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_gather_strings.h"
#include "comm/mpi_runtime.h"
#include "comm/staged_communicator.h"
#include "core/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/float_traits.h"

namespace llmft {
namespace {

// Long enough never to fire on a loaded machine, short enough that a bug fails the test
// before ctest's TIMEOUT would.
constexpr double kTestTimeoutSeconds = 30;
constexpr int kSignalTag = 7;
constexpr DType kFloatTypes[] = {DType::f32, DType::bf16, DType::f16};

// Host memory holding float values stored as `dtype`.
class HostTensor {
 public:
  HostTensor(DType dtype, const std::vector<float>& values)
      : dtype_(dtype), numel_(static_cast<int64_t>(values.size())) {
    bytes_.resize(values.size() * dtype_size(dtype));
    with_float_type(dtype, [&](auto traits) {
      using Traits = decltype(traits);
      auto* out = reinterpret_cast<typename Traits::Storage*>(bytes_.data());
      for (size_t i = 0; i < values.size(); ++i) out[i] = Traits::store(values[i]);
    });
  }
  static HostTensor zeros(DType dtype, int64_t numel) {
    return HostTensor(dtype, std::vector<float>(numel, 0.0f));
  }

  Tensor tensor() { return Tensor(bytes_.data(), dtype_, {numel_}); }
  std::vector<float> values() const {
    std::vector<float> out(numel_);
    with_float_type(dtype_, [&](auto traits) {
      using Traits = decltype(traits);
      const auto* in = reinterpret_cast<const typename Traits::Storage*>(bytes_.data());
      for (int64_t i = 0; i < numel_; ++i) out[i] = Traits::load(in[i]);
    });
    return out;
  }

 private:
  DType dtype_;
  int64_t numel_;
  std::vector<unsigned char> bytes_;
};

Tensor int_tensor(std::vector<int32_t>& values) {
  return Tensor(values.data(), DType::i32, {static_cast<int64_t>(values.size())});
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// A value that bf16 and fp16 hold exactly, as do sums and maxima of up to 4 of them.
float exact_value(int rank, int i) {
  return static_cast<float>((rank * 7 + i) % 11 - 5) * 0.5f;
}

std::string error_of(CommRequest& request) {
  try {
    request.wait();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// After a wait that timed out on purpose: waits again, in tries as long as the request's
// own short timeout, until the collective completes.
void wait_until_complete(CommRequest& request) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kTestTimeoutSeconds);
  while (true) {
    try {
      request.wait();
      return;
    } catch (const Error&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
    }
  }
}

// Orders the ranks of a test around a collective that one rank stays out of, e.g. "every
// other rank has given up on it". Point-to-point on the world, apart from collectives.
void signal_rank(int rank) {
  LLMFT_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, rank, kSignalTag, MPI_COMM_WORLD));
}
void wait_for_signal_from_every_other_rank(int size) {
  for (int r = 0; r < size; ++r) {
    if (r == world_rank()) continue;
    LLMFT_MPI_CHECK(
        MPI_Recv(nullptr, 0, MPI_BYTE, r, kSignalTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
}

TEST_CASE("all_reduce sums and takes the max in f32, bf16 and fp16") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int n = 37;
  for (DType dtype : kFloatTypes) {
    CAPTURE(std::string(dtype_name(dtype)));
    std::vector<float> mine(n), sum(n, 0.0f), max(n, -1e30f);
    for (int i = 0; i < n; ++i) {
      mine[i] = exact_value(world.rank(), i);
      for (int r = 0; r < world.size(); ++r) {
        sum[i] += exact_value(r, i);
        max[i] = std::max(max[i], exact_value(r, i));
      }
    }
    HostTensor summed(dtype, mine), maxed(dtype, mine);
    world.all_reduce(summed.tensor(), ReduceOp::sum)->wait();
    world.all_reduce(maxed.tensor(), ReduceOp::max)->wait();
    CHECK(summed.values() == sum);
    CHECK(maxed.values() == max);
  }
}

TEST_CASE("fp16 sums keep the precision that bf16 lacks") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const float value = 1.0f + 1.0f / 256;  // 8 fraction bits: fp16 holds it, bf16 does not
  HostTensor data(DType::f16, {value});
  world.all_reduce(data.tensor(), ReduceOp::sum)->wait();
  CHECK(data.values()[0] == value * world.size());
}

TEST_CASE("half-precision max propagates NaN from any rank") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  for (DType dtype : {DType::bf16, DType::f16}) {
    CAPTURE(std::string(dtype_name(dtype)));
    HostTensor data(dtype, {world.rank() == world.size() - 1 ? NAN : 1.0f, 2.0f});
    world.all_reduce(data.tensor(), ReduceOp::max)->wait();
    CHECK(std::isnan(data.values()[0]));
    CHECK(data.values()[1] == 2.0f);
  }
}

TEST_CASE("reduce_scatter gives each rank the sum of its block") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int n = 5, size = world.size();
  auto value = [](int rank, int block, int i) { return (rank + 1.0f) * (block + 1) + i; };
  for (DType dtype : kFloatTypes) {
    CAPTURE(std::string(dtype_name(dtype)));
    std::vector<float> mine(size * n), expected(n, 0.0f);
    for (int block = 0; block < size; ++block) {
      for (int i = 0; i < n; ++i) mine[block * n + i] = value(world.rank(), block, i);
    }
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < n; ++i) expected[i] += value(r, world.rank(), i);
    }
    HostTensor send(dtype, mine);
    HostTensor recv = HostTensor::zeros(dtype, n);
    world.reduce_scatter(send.tensor(), recv.tensor())->wait();
    CHECK(recv.values() == expected);
  }
}

TEST_CASE("every rank's string, of any length, in rank order") {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Rank r sends r copies of its letter: rank 0 an empty string.
  const auto letters = [](int r) { return std::string(static_cast<size_t>(r), char('a' + r)); };
  const std::vector<std::string> all = mpi_gather_strings(MPI_COMM_WORLD, letters(rank));
  CHECK(all.size() == static_cast<size_t>(size));
  for (int r = 0; r < std::min<int>(size, static_cast<int>(all.size())); ++r) {
    CHECK(all[r] == letters(r));
  }
}

TEST_CASE("all_gather puts every rank's block in rank order") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int n = 3, size = world.size();
  for (DType dtype : kFloatTypes) {
    CAPTURE(std::string(dtype_name(dtype)));
    std::vector<float> mine(n), expected(size * n);
    for (int i = 0; i < n; ++i) mine[i] = 10.0f * world.rank() + i;
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < n; ++i) expected[r * n + i] = 10.0f * r + i;
    }
    HostTensor send(dtype, mine);
    HostTensor recv = HostTensor::zeros(dtype, size * n);
    world.all_gather(send.tensor(), recv.tensor())->wait();
    CHECK(recv.values() == expected);
  }
  std::vector<int32_t> tokens{world.rank(), 1000 + world.rank()}, gathered(2 * size, -1);
  world.all_gather(int_tensor(tokens), int_tensor(gathered))->wait();
  for (int r = 0; r < size; ++r) {
    CHECK(gathered[2 * r] == r);
    CHECK(gathered[2 * r + 1] == 1000 + r);
  }
}

TEST_CASE("broadcast copies the root's data to every rank") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  for (int root : {0, world.size() - 1}) {
    CAPTURE(root);
    HostTensor data(DType::bf16, {world.rank() * 1.0f, -3.5f * world.rank()});
    std::vector<int32_t> ids{world.rank(), 7 * world.rank(), -world.rank()};
    world.broadcast(data.tensor(), root)->wait();
    world.broadcast(int_tensor(ids), root)->wait();
    CHECK(data.values() == std::vector<float>{root * 1.0f, -3.5f * root});
    CHECK(ids == std::vector<int32_t>{root, 7 * root, -root});
  }
  world.barrier();
}

TEST_CASE("split into even and odd ranks: collectives stay within each group") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int parity = world.rank() % 2;
  const std::unique_ptr<Communicator> group = world.split(parity, world.rank());
  CHECK(group->size() == (world.size() + 1 - parity) / 2);
  CHECK(group->rank() == world.rank() / 2);
  HostTensor ranks(DType::f32, {static_cast<float>(world.rank())});
  HostTensor members = HostTensor::zeros(DType::f32, group->size());
  group->all_gather(ranks.tensor(), members.tensor())->wait();
  group->all_reduce(ranks.tensor(), ReduceOp::sum)->wait();
  float sum = 0.0f;
  for (int i = 0; i < group->size(); ++i) {
    CHECK(members.values()[i] == static_cast<float>(2 * i + parity));
    sum += static_cast<float>(2 * i + parity);
  }
  CHECK(ranks.values()[0] == sum);
}

TEST_CASE("tensor-parallel ranks vary fastest: rank = tp_rank + tp * dp_rank") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int tp = 2;
  if (world.size() % tp != 0) return;
  world.set_timeout_seconds(kTestTimeoutSeconds + 1);
  const int tp_rank = world.rank() % tp, dp_rank = world.rank() / tp, dp = world.size() / tp;
  const std::unique_ptr<Communicator> tp_group = world.split(dp_rank, tp_rank);
  const std::unique_ptr<Communicator> dp_group = world.split(tp_rank, dp_rank);
  CHECK(tp_group->size() == tp);
  CHECK(tp_group->rank() == tp_rank);
  CHECK(dp_group->size() == dp);
  CHECK(dp_group->rank() == dp_rank);
  CHECK(dynamic_cast<MpiCommunicator&>(*tp_group).timeout_seconds() == kTestTimeoutSeconds + 1);

  HostTensor mine(DType::f32, {static_cast<float>(world.rank())});
  HostTensor tp_members = HostTensor::zeros(DType::f32, tp);
  HostTensor dp_members = HostTensor::zeros(DType::f32, dp);
  auto tp_gather = tp_group->all_gather(mine.tensor(), tp_members.tensor());
  auto dp_gather = dp_group->all_gather(mine.tensor(), dp_members.tensor());
  dp_gather->wait();
  tp_gather->wait();
  for (int t = 0; t < tp; ++t) CHECK(tp_members.values()[t] == t + tp * dp_rank);
  for (int d = 0; d < dp; ++d) CHECK(dp_members.values()[d] == tp_rank + tp * d);
}

TEST_CASE("overlapping collectives complete whichever is waited for first") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int size = world.size();
  HostTensor reduced(DType::f32, std::vector<float>(1000, 1.0f));
  HostTensor block(DType::bf16, {static_cast<float>(world.rank())});
  HostTensor gathered = HostTensor::zeros(DType::bf16, size);
  auto first = world.all_reduce(reduced.tensor(), ReduceOp::sum);
  auto second = world.all_gather(block.tensor(), gathered.tensor());
  second->wait();
  first->wait();
  CHECK(reduced.values() == std::vector<float>(1000, static_cast<float>(size)));
  for (int r = 0; r < size; ++r) CHECK(gathered.values()[r] == static_cast<float>(r));
}

TEST_CASE("counters count calls and the bytes of this rank's input buffer") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int size = world.size();
  HostTensor grads = HostTensor::zeros(DType::f32, 10);
  HostTensor shard = HostTensor::zeros(DType::bf16, 3);
  HostTensor whole = HostTensor::zeros(DType::bf16, 3 * size);
  std::vector<int32_t> ids(5, 0);
  world.all_reduce(grads.tensor(), ReduceOp::sum)->wait();
  world.reset_counters();
  world.all_reduce(grads.tensor(), ReduceOp::sum)->wait();
  world.all_reduce(grads.tensor(), ReduceOp::max)->wait();
  world.reduce_scatter(whole.tensor(), shard.tensor())->wait();
  world.all_gather(shard.tensor(), whole.tensor())->wait();
  world.broadcast(int_tensor(ids), 0)->wait();
  world.barrier();
  auto counter = [&](Collective c) { return world.counters()[static_cast<int>(c)]; };
  CHECK(counter(Collective::all_reduce).calls == 2);
  CHECK(counter(Collective::all_reduce).bytes == 2 * 10 * 4);
  CHECK(counter(Collective::reduce_scatter).calls == 1);
  CHECK(counter(Collective::reduce_scatter).bytes == 3 * size * 2);
  CHECK(counter(Collective::all_gather).calls == 1);
  CHECK(counter(Collective::all_gather).bytes == 3 * 2);
  CHECK(counter(Collective::broadcast).calls == 1);
  CHECK(counter(Collective::broadcast).bytes == 5 * 4);
  world.reset_counters();
  for (const CollectiveCounter& c : world.counters()) CHECK((c.calls == 0 && c.bytes == 0));
}

// The two tests below leave a collective in flight on purpose: its buffer is static, so
// that if a check fails and the test ends early, MPI never writes into freed memory.
TEST_CASE("a wait gives up after the timeout, naming the collective and the context") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  const int absent = 1;
  if (world.size() < 2) return;
  world.set_context("step 7");
  static HostTensor data(DType::f32, {1.0f, 2.0f});
  if (world.rank() == absent) {
    wait_for_signal_from_every_other_rank(world.size());  // they gave up
    world.all_reduce(data.tensor(), ReduceOp::sum)->wait();
  } else {
    world.set_timeout_seconds(1);
    auto request = world.all_reduce(data.tensor(), ReduceOp::sum);
    CHECK(error_of(*request) ==
          "all_reduce (step 7) did not complete within 1 s: a rank may have died or hung; raise "
          "--comm-timeout if a step legitimately takes longer");
    signal_rank(absent);
    wait_until_complete(*request);
  }
  CHECK(data.values() == std::vector<float>{1.0f * world.size(), 2.0f * world.size()});
  world.set_timeout_seconds(kTestTimeoutSeconds);
  world.barrier();
}

TEST_CASE("a failure notice ends another rank's wait, naming the rank and its message") {
  MpiCommunicator world(MPI_COMM_WORLD, kTestTimeoutSeconds);
  world.set_context("notice test");
  static HostTensor data(DType::f32, {1.0f});
  const int failing = 1;
  if (world.size() == 1) {
    report_failure("nobody to tell");  // returns at once, and the rank can still communicate
  } else if (world.rank() == failing) {
    // Reports only once the others have started the all_reduce, so that their wait on it,
    // and no earlier one, is the wait that finds the notice.
    wait_for_signal_from_every_other_rank(world.size());
    report_failure("injected");
    wait_for_signal_from_every_other_rank(world.size());  // they gave up
  } else {
    auto request = world.all_reduce(data.tensor(), ReduceOp::sum);
    signal_rank(failing);
    CHECK(error_of(*request) == "all_reduce (notice test) aborted: rank 1 failed: injected");
    signal_rank(failing);
    request->wait();
  }
  if (world.size() == 1 || world.rank() == failing) {
    world.all_reduce(data.tensor(), ReduceOp::sum)->wait();
  }
  CHECK(data.values()[0] == static_cast<float>(world.size()));
  world.barrier();
}

// Sums that round (values no 16-bit float holds exactly), so that equality is bitwise.
std::vector<float> rounding_values(int rank, int n) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = 0.1f * static_cast<float>(i) + rank / 3.0f;
  return values;
}

TEST_CASE("a staged communicator (device buffers through host copies) gives the host results") {
  MpiCommunicator direct(MPI_COMM_WORLD, kTestTimeoutSeconds);
  CpuBackend backend;
  StagedCommunicator staged(std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, kTestTimeoutSeconds),
                            backend);
  const int size = direct.size(), n = 6;
  for (DType dtype : kFloatTypes) {
    CAPTURE(std::string(dtype_name(dtype)));
    const std::vector<float> mine = rounding_values(direct.rank(), size * n);
    HostTensor a(dtype, mine), b(dtype, mine);
    direct.all_reduce(a.tensor(), ReduceOp::sum)->wait();
    auto request = staged.all_reduce(b.tensor(), ReduceOp::sum);
    CHECK(b.values() == HostTensor(dtype, mine).values());  // changed only at the wait
    request->wait();
    CHECK(a.values() == b.values());

    HostTensor send(dtype, mine), direct_recv = HostTensor::zeros(dtype, n),
                                  staged_recv = HostTensor::zeros(dtype, n);
    direct.reduce_scatter(send.tensor(), direct_recv.tensor())->wait();
    staged.reduce_scatter(send.tensor(), staged_recv.tensor())->wait();
    CHECK(direct_recv.values() == staged_recv.values());

    HostTensor block(dtype, rounding_values(direct.rank(), n)),
        direct_all = HostTensor::zeros(dtype, size * n),
        staged_all = HostTensor::zeros(dtype, size * n);
    direct.all_gather(block.tensor(), direct_all.tensor())->wait();
    staged.all_gather(block.tensor(), staged_all.tensor())->wait();
    CHECK(direct_all.values() == staged_all.values());

    HostTensor root_data(dtype, rounding_values(direct.rank(), n));
    staged.broadcast(root_data.tensor(), size - 1)->wait();
    CHECK(root_data.values() == HostTensor(dtype, rounding_values(size - 1, n)).values());
  }
  // Splits stay staged and within their group.
  std::unique_ptr<Communicator> half = staged.split(direct.rank() % 2, direct.rank());
  HostTensor one(DType::f32, {1.0f});
  half->all_reduce(one.tensor(), ReduceOp::sum)->wait();
  CHECK(one.values()[0] == static_cast<float>(half->size()));
  CHECK(dynamic_cast<StagedCommunicator*>(half.get()) != nullptr);
}

}  // namespace
}  // namespace llmft
