// The memory model's prediction against what a real run's allocators measured: each pool
// (the device's and, with the optimizer offloaded, the host's) in total and per category,
// to the byte. CHECKs, so that every rank of an MPI test goes on into the next collective.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "core/allocator.h"
#include "parallel/memory_model.h"

namespace llmft::testing {

inline void check_pool(const char* pool, const CategoryBytes& predicted, size_t predicted_total,
                       const Allocator& measured) {
  CAPTURE(pool);
  CHECK(predicted_total == measured.total_peak());
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    CAPTURE(std::string(memory_category_name(static_cast<MemoryCategory>(i))));
    CHECK(predicted[i] == measured.peak_by_category()[i]);
  }
}

// `host`: the host pool's allocator of an offloaded optimizer, else null.
inline void check_prediction(const MemoryPrediction& p, const Allocator& device,
                             const Allocator* host = nullptr) {
  check_pool("device", p.peak_by_category, p.peak_total, device);
  if (host) check_pool("host", p.host_peak_by_category, p.host_peak_total, *host);
}

}  // namespace llmft::testing
