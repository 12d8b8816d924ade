#include "core/allocator.h"

#include <utility>

#include "core/byte_size.h"
#include "core/error.h"

namespace llmft {

size_t rounded_allocation(size_t bytes) {
  if (bytes == 0) return kAllocationGranularity;
  return (bytes + kAllocationGranularity - 1) / kAllocationGranularity * kAllocationGranularity;
}

Allocator::Allocator(DeviceMemory& memory, size_t budget_bytes)
    : memory_(memory), budget_(budget_bytes) {}

Allocator::~Allocator() = default;

Buffer Allocator::allocate(size_t bytes, MemoryCategory category, const std::string& what) {
  size_t rounded = rounded_allocation(bytes);
  if (budget_ != 0 && usage_.total_current() + rounded > budget_) {
    LLMFT_FAIL("out of device memory: allocating "
               << format_bytes(rounded) << " for " << what << " (" << memory_category_name(category)
               << (phase_.empty() ? "" : ", during " + phase_) << ") needs "
               << format_bytes(usage_.total_current() + rounded) << " in all, over the budget of "
               << format_bytes(budget_)
               << "; in use: " << describe_bytes(usage_.current_by_category())
               << ". Raise --device-memory, or lower --micro-batch or --seq-len");
  }
  void* ptr = memory_.allocate(rounded);
  if (usage_.add(category, rounded)) peak_phase_ = phase_;
  return Buffer(this, ptr, bytes, rounded, category);
}

void Allocator::release(void* ptr, size_t rounded_bytes, MemoryCategory category) {
  memory_.release(ptr, rounded_bytes);
  usage_.remove(category, rounded_bytes);
}

Buffer::Buffer(Buffer&& other) noexcept {
  *this = std::move(other);
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    rounded_ = std::exchange(other.rounded_, 0);
    category_ = other.category_;
  }
  return *this;
}

void Buffer::reset() {
  if (owner_ != nullptr && data_ != nullptr) owner_->release(data_, rounded_, category_);
  owner_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
  rounded_ = 0;
}

Tensor Buffer::as(DType dtype, Shape shape) const {
  Tensor t(data_, dtype, std::move(shape));
  LLMFT_REQUIRE(t.bytes() <= bytes_,
                "internal: tensor " << shape_string(t.shape) << " does not fit its buffer");
  return t;
}

}  // namespace llmft
