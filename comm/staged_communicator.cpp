#include "comm/staged_communicator.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace llmft {
namespace {

// A host copy of a device tensor, with the tensor view over it.
struct HostCopy {
  std::vector<uint8_t> bytes;
  Tensor host;
};

HostCopy host_buffer(const Tensor& like) {
  HostCopy copy;
  copy.bytes.resize(like.bytes());
  copy.host = Tensor{copy.bytes.data(), like.dtype, like.shape};
  return copy;
}

HostCopy staged_from(Backend& backend, const Tensor& device) {
  HostCopy copy = host_buffer(device);
  backend.copy_to_host(copy.bytes.data(), device);
  return copy;
}

// Waits for the host collective, then copies its result to the device tensor.
class StagedRequest : public CommRequest {
 public:
  StagedRequest(Backend& backend, HostCopy send, HostCopy result, Tensor device_result)
      : backend_(backend),
        send_(std::move(send)),
        result_(std::move(result)),
        device_result_(device_result) {}
  void start(std::unique_ptr<CommRequest> host) { host_ = std::move(host); }
  const Tensor& send() const { return send_.host; }
  const Tensor& result() const { return result_.host; }

  void wait() override {
    if (!host_) return;
    host_->wait();
    host_.reset();
    backend_.copy_to_device(device_result_, result_.bytes.data());
  }

 private:
  Backend& backend_;
  HostCopy send_, result_;
  Tensor device_result_;
  std::unique_ptr<CommRequest> host_;
};

}  // namespace

StagedCommunicator::StagedCommunicator(std::unique_ptr<Communicator> host, Backend& backend)
    : host_(std::move(host)), backend_(backend) {}

std::unique_ptr<CommRequest> StagedCommunicator::all_reduce(Tensor data, ReduceOp op) {
  auto request =
      std::make_unique<StagedRequest>(backend_, HostCopy{}, staged_from(backend_, data), data);
  request->start(host_->all_reduce(request->result(), op));
  return request;
}

std::unique_ptr<CommRequest> StagedCommunicator::reduce_scatter(Tensor send, Tensor recv) {
  auto request = std::make_unique<StagedRequest>(backend_, staged_from(backend_, send),
                                                 host_buffer(recv), recv);
  request->start(host_->reduce_scatter(request->send(), request->result()));
  return request;
}

std::unique_ptr<CommRequest> StagedCommunicator::all_gather(Tensor send, Tensor recv) {
  auto request = std::make_unique<StagedRequest>(backend_, staged_from(backend_, send),
                                                 host_buffer(recv), recv);
  request->start(host_->all_gather(request->send(), request->result()));
  return request;
}

std::unique_ptr<CommRequest> StagedCommunicator::broadcast(Tensor data, int root) {
  // Only the root's data is read: the others receive into a buffer they need not fill.
  HostCopy staged = host_->rank() == root ? staged_from(backend_, data) : host_buffer(data);
  auto request = std::make_unique<StagedRequest>(backend_, HostCopy{}, std::move(staged), data);
  request->start(host_->broadcast(request->result(), root));
  return request;
}

std::unique_ptr<Communicator> StagedCommunicator::split(int color, int key) {
  return std::make_unique<StagedCommunicator>(host_->split(color, key), backend_);
}

}  // namespace llmft
