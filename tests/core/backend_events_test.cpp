// Events on the CPU backend mark points of the host's work in call order and time the
// span between them; on the counting device nothing runs, so no time passes.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "core/counting/counting_backend.h"
#include "core/cpu/cpu_backend.h"

namespace llmft {
namespace {

TEST_CASE("cpu events time the work between them, in the order they were recorded") {
  CpuBackend be;
  auto before = be.create_event(), after = be.create_event(), later = be.create_event();
  be.record(*before, Queue::compute);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // blocks at least 2 ms
  be.record(*after, Queue::communication);
  be.wait(Queue::compute, *after);
  be.record(*later, Queue::compute);
  be.synchronize(*later);
  CHECK(be.elapsed_seconds(*before, *after) >= 0.002);
  CHECK(be.elapsed_seconds(*after, *later) >= 0.0);
  CHECK(be.elapsed_seconds(*before, *later) >= be.elapsed_seconds(*before, *after));
  CHECK(be.elapsed_seconds(*after, *before) <= -0.002);
}

TEST_CASE("counting events: nothing runs, so no time passes") {
  CountingBackend be;
  auto a = be.create_event(), b = be.create_event();
  be.record(*a, Queue::compute);
  be.record(*b, Queue::compute);
  be.synchronize(*b);
  CHECK(be.elapsed_seconds(*a, *b) == 0.0);
}

TEST_CASE("the counting device's small buffers are real and its large ones only addresses") {
  CountingBackend be;
  Allocator alloc(be.memory(), 0);
  Buffer small = alloc.allocate(8, MemoryCategory::other, "scalars");
  Buffer large = alloc.allocate(1 << 20, MemoryCategory::activations, "activations");
  const float written[2] = {3.5f, -1.0f};
  float read[2] = {0.0f, 0.0f};
  be.copy_to_device(small.as(DType::f32, {2}), written);
  be.copy_to_host(read, small.as(DType::f32, {2}).view(1, {1}));  // a view into it
  CHECK(read[0] == -1.0f);
  float from_large[2] = {7.0f, 7.0f};
  be.copy_to_host(from_large, large.as(DType::f32, {2}));
  CHECK(from_large[0] == 0.0f);
  CHECK(from_large[1] == 0.0f);
  CHECK(alloc.total_current() == rounded_allocation(8) + rounded_allocation(1 << 20));
}

}  // namespace
}  // namespace llmft
