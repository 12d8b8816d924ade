// The tracking allocator: per-category current/peak bytes, rounding, and the budget.
#include <doctest/doctest.h>

#include "core/cpu/cpu_backend.h"
#include "core/error.h"

using namespace llmft;

TEST_CASE("allocator tracks current and peak bytes per category") {
  CpuMemory memory;
  Allocator alloc(memory, 0);
  {
    Buffer a = alloc.allocate(1000, MemoryCategory::params, "a");
    Buffer b = alloc.allocate(1, MemoryCategory::activations, "b");
    CHECK(alloc.current(MemoryCategory::params) == rounded_allocation(1000));
    CHECK(alloc.current(MemoryCategory::activations) == kAllocationGranularity);
    CHECK(alloc.total_current() == rounded_allocation(1000) + kAllocationGranularity);
    b.reset();
    Buffer c = alloc.allocate(4096, MemoryCategory::workspace, "c");
    CHECK(alloc.peak(MemoryCategory::activations) == kAllocationGranularity);
    CHECK(alloc.total_peak() == rounded_allocation(1000) + 4096);
    CHECK(alloc.at_total_peak()[index_of(MemoryCategory::workspace)] == 4096);
    CHECK(alloc.at_total_peak()[index_of(MemoryCategory::activations)] == 0);
  }
  CHECK(alloc.total_current() == 0);
  alloc.reset_peaks();
  CHECK(alloc.total_peak() == 0);
}

TEST_CASE("moving a buffer transfers ownership once") {
  CpuMemory memory;
  Allocator alloc(memory, 0);
  Buffer a = alloc.allocate(64, MemoryCategory::grads, "a");
  Buffer b = std::move(a);
  CHECK(a.empty());
  CHECK(alloc.current(MemoryCategory::grads) == kAllocationGranularity);
  b = Buffer();
  CHECK(alloc.current(MemoryCategory::grads) == 0);
}

TEST_CASE("over-budget allocation is an error that names the request and the option") {
  CpuMemory memory;
  Allocator alloc(memory, 8192);
  Buffer a = alloc.allocate(4096, MemoryCategory::params, "weights");
  try {
    Buffer b = alloc.allocate(8192, MemoryCategory::activations, "logits");
    FAIL("expected an out-of-memory error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("out of device memory") != std::string::npos);
    CHECK(what.find("logits (activations)") != std::string::npos);
    CHECK(what.find("params 4.00 KiB") != std::string::npos);
    CHECK(what.find("--device-memory") != std::string::npos);
  }
  CHECK(alloc.total_current() == 4096);
}
