#include "comm/cuda_stream_order.h"

#include "core/cuda/cuda_check.h"

namespace llmft {

OwnedStream::OwnedStream(int device) {
  LLMFT_CUDA_CHECK(cudaSetDevice(device));
  LLMFT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

OwnedStream::~OwnedStream() {
  cudaStreamDestroy(stream_);
}

OwnedEvent::OwnedEvent() {
  LLMFT_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
}

OwnedEvent::~OwnedEvent() {
  cudaEventDestroy(event_);
}

void order_after(cudaStream_t later, cudaStream_t earlier, const OwnedEvent& marker) {
  LLMFT_CUDA_CHECK(cudaEventRecord(marker.get(), earlier));
  LLMFT_CUDA_CHECK(cudaStreamWaitEvent(later, marker.get(), 0));
}

}  // namespace llmft
