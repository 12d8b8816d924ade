// CUDA streams and events owned by a communicator that queues on a stream of its own, and
// the ordering every collective needs between that stream and the compute stream: "this
// stream waits for what that one has queued so far" (an event recorded on one, waited on
// by the other; neither the host nor the other stream blocks).
// Thread-safety: the thread that owns the communicator.
#pragma once

#include <cuda_runtime.h>

namespace llmft {

// A non-blocking stream (it does not wait for the legacy default stream) on `device`,
// which it makes the current one; destroyed with its owner.
class OwnedStream {
 public:
  explicit OwnedStream(int device);
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event without timing (the cheapest to record and wait on), destroyed with its owner.
class OwnedEvent {
 public:
  OwnedEvent();
  ~OwnedEvent();
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Work queued on `later` from now on runs after the work queued on `earlier` so far.
// `marker` is recorded on `earlier`; it may be reused at once (the wait keeps the point
// recorded when it was queued).
void order_after(cudaStream_t later, cudaStream_t earlier, const OwnedEvent& marker);

}  // namespace llmft
