// CudnnAttention with cuDNN (core/cuda/cudnn_attention.h): SDPA graphs of cudnn-frontend.
// Compiled only when CMake's LLMFT_CUDNN is on.
#include "core/cuda/cudnn_attention.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft::cuda {
namespace {

namespace fe = cudnn_frontend;

// The graphs' tensors, named by the uids their variant packs use.
enum TensorUid : int64_t { kQ = 1, kK, kV, kOut, kStats, kDout, kDq, kDk, kDv };

// cuDNN reads and writes 16-byte vectors: every operand and row must start on 16 bytes.
constexpr uintptr_t kAlignment = 16;

bool aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kAlignment == 0;
}

// q, k and v of the packed qkv(B, T, (H + 2 KVH) D) tensor (and dq, dk, dv of dqkv) as
// cuDNN's (batch, head, sequence, dim) dimensions and strides; each starts at its first
// head's column (k: H D, v: (H + KVH) D).
std::vector<int64_t> qkv_dims(const AttentionShape& d, int64_t heads) {
  return {d.B, heads, d.T, d.D};
}

std::vector<int64_t> qkv_strides(const AttentionShape& d) {
  const int64_t W = (d.H + 2 * d.KVH) * d.D;
  return {d.T * W, d.D, W, 1};
}

// out(B, T, H D) and dout alike.
std::vector<int64_t> out_strides(const AttentionShape& d) {
  return {d.T * d.H * d.D, d.D, d.H * d.D, 1};
}

void check_cudnn(cudnnStatus_t status, const char* call) {
  LLMFT_REQUIRE(status == CUDNN_STATUS_SUCCESS,
                "cuDNN: " << call << " failed: " << cudnnGetErrorString(status));
}

fe::DataType_t io_type(DType type) {
  return type == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
}

using Graph = fe::graph::Graph;

std::shared_ptr<fe::graph::Tensor_attributes> input(Graph& g, const char* name, int64_t uid,
                                                    std::vector<int64_t> dims,
                                                    std::vector<int64_t> strides) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dims))
                      .set_stride(std::move(strides)));
}

// q, k and v of the packed qkv tensor.
struct QkvTensors {
  std::shared_ptr<fe::graph::Tensor_attributes> q, k, v;
};

QkvTensors qkv_inputs(Graph& g, const AttentionShape& d) {
  return {input(g, "q", kQ, qkv_dims(d, d.H), qkv_strides(d)),
          input(g, "k", kK, qkv_dims(d, d.KVH), qkv_strides(d)),
          input(g, "v", kV, qkv_dims(d, d.KVH), qkv_strides(d))};
}

// The softmax statistics: lse(B, H, T) f32, as (B, H, T, 1).
void lay_out_stats(fe::graph::Tensor_attributes& stats, const AttentionShape& d) {
  stats.set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({d.B, d.H, d.T, 1})
      .set_stride({d.H * d.T, d.T, 1, 1});
}

void set_output(const std::shared_ptr<fe::graph::Tensor_attributes>& t, int64_t uid,
                std::vector<int64_t> dims, std::vector<int64_t> strides) {
  t->set_output(true).set_uid(uid).set_dim(std::move(dims)).set_stride(std::move(strides));
}

std::shared_ptr<Graph> new_graph(DType type) {
  auto g = std::make_shared<Graph>();
  g->set_io_data_type(io_type(type))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

float attention_scale(const AttentionShape& d) {
  return 1.0f / std::sqrt(static_cast<float>(d.D));
}

// Forward: out and the softmax statistics (lse) from q, k, v; causal from the top left.
std::shared_ptr<Graph> forward_graph(const AttentionShape& d) {
  auto g = new_graph(d.type);
  const QkvTensors in = qkv_inputs(*g, d);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(true)
                     .set_causal_mask(true)
                     .set_attn_scale(attention_scale(d));
  auto [out, stats] = g->sdpa(in.q, in.k, in.v, options);
  set_output(out, kOut, qkv_dims(d, d.H), out_strides(d));
  stats->set_output(true);
  lay_out_stats(*stats, d);
  return g;
}

// Backward: dq, dk, dv (into the packed dqkv) from q, k, v, out, dout and the statistics.
std::shared_ptr<Graph> backward_graph(const AttentionShape& d, bool deterministic) {
  auto g = new_graph(d.type);
  const QkvTensors in = qkv_inputs(*g, d);
  auto out = input(*g, "out", kOut, qkv_dims(d, d.H), out_strides(d));
  auto dout = input(*g, "dout", kDout, qkv_dims(d, d.H), out_strides(d));
  auto stats = g->tensor(fe::graph::Tensor_attributes().set_name("stats"));
  lay_out_stats(*stats, d);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_causal_mask(true)
                     .set_attn_scale(attention_scale(d))
                     .set_deterministic_algorithm(deterministic);
  auto [dq, dk, dv] = g->sdpa_backward(in.q, in.k, in.v, out, dout, stats, options);
  set_output(dq, kDq, qkv_dims(d, d.H), qkv_strides(d));
  set_output(dk, kDk, qkv_dims(d, d.KVH), qkv_strides(d));
  set_output(dv, kDv, qkv_dims(d, d.KVH), qkv_strides(d));
  return g;
}

}  // namespace

struct CudnnAttention::Graphs {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, bool>;
  // A built graph and the workspace its plan asks, or why cuDNN declined the call (graph
  // null).
  struct Built {
    std::shared_ptr<Graph> graph;
    int64_t workspace = -1;
    std::string declined;
  };
  AttentionWorkspaceRule rule = AttentionWorkspaceRule::cudnn_deterministic;
  cudnnHandle_t handle = nullptr;
  void* forward_workspace = nullptr;
  std::map<Key, Built> built;  // per dtype, shape and direction

  // The graph for this call (backward: for a chunk of rows), built on first use.
  const Built& graph(const AttentionShape& d, bool backward) {
    const Key key{static_cast<int>(d.type), d.B, d.T, d.H, d.KVH, d.D, backward};
    auto found = built.find(key);
    if (found == built.end()) found = built.emplace(key, build(d, backward)).first;
    return found->second;
  }

  // The most workspace a plan for this call may ask.
  int64_t workspace_limit(const AttentionShape& d, bool backward) const {
    return static_cast<int64_t>(backward ? attention_backward_workspace_bytes(rule, d)
                                         : kForwardWorkspaceBytes);
  }

  Built build(const AttentionShape& d, bool backward) const {
    if (!cudnn_takes_attention(d)) {
      return {nullptr, -1,
              "not 16-bit, a head size not a multiple of 8 up to 128, or H % KVH != 0"};
    }
    const bool deterministic = rule == AttentionWorkspaceRule::cudnn_deterministic;
    std::shared_ptr<Graph> g = backward ? backward_graph(d, deterministic) : forward_graph(d);
    const int64_t limit = workspace_limit(d, backward);
    g->deselect_workspace_greater_than(limit);
    try {  // the frontend's descriptors throw where its graph calls return errors
      fe::error_t status = g->build(handle, {fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
      if (status.is_bad()) return {nullptr, -1, status.get_message()};
    } catch (const fe::cudnnException& e) {
      return {nullptr, -1, e.what()};
    }
    int64_t bytes = 0;
    if (g->get_workspace_size(bytes).is_bad() || bytes > limit) {
      return {nullptr, -1,
              "its plan needs " + std::to_string(bytes) + " bytes of workspace, over the bound " +
                  std::to_string(limit)};
    }
    return {g, bytes, ""};
  }

  void execute(Graph& g, std::unordered_map<int64_t, void*>& pointers, void* workspace,
               CudaStream stream) {
    check_cudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
    fe::error_t status = g.execute(handle, pointers, workspace);
    LLMFT_REQUIRE(status.is_good(), "cuDNN attention failed: " << status.get_message());
  }
};

namespace {

// The shape of the backward's chunk of `rows` rows.
AttentionShape with_rows(AttentionShape d, int64_t rows) {
  d.B = rows;
  return d;
}

}  // namespace

bool CudnnAttention::available() {
  return true;
}

CudnnAttention::CudnnAttention(bool deterministic)
    : rule_(deterministic ? AttentionWorkspaceRule::cudnn_deterministic
                          : AttentionWorkspaceRule::cudnn_nondeterministic),
      graphs_(std::make_unique<Graphs>()) {
  graphs_->rule = rule_;
  check_cudnn(cudnnCreate(&graphs_->handle), "cudnnCreate");
  const cudaError_t allocated = cudaMalloc(&graphs_->forward_workspace, kForwardWorkspaceBytes);
  if (allocated != cudaSuccess) cudnnDestroy(graphs_->handle);  // no destructor runs then
  LLMFT_CUDA_CHECK(allocated);
}

CudnnAttention::~CudnnAttention() {
  // Destructors cannot throw; these fail only when the context is already gone.
  cudaFree(graphs_->forward_workspace);
  cudnnDestroy(graphs_->handle);
}

bool CudnnAttention::forward(void* out, float* lse, const void* qkv, const AttentionShape& dims,
                             CudaStream stream) {
  if (!aligned(out) || !aligned(lse) || !aligned(qkv)) return false;
  Graph* g = graphs_->graph(dims, false).graph.get();
  if (g == nullptr) return false;
  auto* packed = static_cast<char*>(const_cast<void*>(qkv));
  const int64_t head_bytes = dims.D * static_cast<int64_t>(dtype_size(dims.type));
  std::unordered_map<int64_t, void*> pointers{{kQ, packed},
                                              {kK, packed + dims.H * head_bytes},
                                              {kV, packed + (dims.H + dims.KVH) * head_bytes},
                                              {kOut, out},
                                              {kStats, lse}};
  graphs_->execute(*g, pointers, graphs_->forward_workspace, stream);
  return true;
}

bool CudnnAttention::backward(void* dqkv, const void* dout, const void* qkv, const void* out,
                              const float* lse, const AttentionShape& dims, void* workspace,
                              size_t workspace_bytes, CudaStream stream) {
  if (!aligned(dqkv) || !aligned(dout) || !aligned(qkv) || !aligned(out) || !aligned(lse)) {
    return false;
  }
  // Every chunk's graph first, so that a declined one leaves nothing queued.
  const int64_t chunk = attention_backward_chunk_rows(rule_, dims);
  const int64_t last = dims.B % chunk == 0 ? chunk : dims.B % chunk;
  for (const int64_t rows : {chunk, last}) {
    const Graphs::Built& built = graphs_->graph(with_rows(dims, rows), true);
    if (built.graph == nullptr || built.workspace > static_cast<int64_t>(workspace_bytes)) {
      return false;
    }
  }
  const int64_t element = static_cast<int64_t>(dtype_size(dims.type));
  const int64_t head_bytes = dims.D * element;
  const int64_t k_offset = dims.H * head_bytes, v_offset = (dims.H + dims.KVH) * head_bytes;
  const int64_t qkv_row = dims.T * (dims.H + 2 * dims.KVH) * head_bytes;
  const int64_t out_row = dims.T * dims.H * head_bytes;
  for (int64_t first = 0; first < dims.B; first += chunk) {
    const int64_t rows = std::min(chunk, dims.B - first);
    Graph& g = *graphs_->graph(with_rows(dims, rows), true).graph;
    char* packed = static_cast<char*>(const_cast<void*>(qkv)) + first * qkv_row;
    char* dpacked = static_cast<char*>(dqkv) + first * qkv_row;
    std::unordered_map<int64_t, void*> pointers{
        {kQ, packed},
        {kK, packed + k_offset},
        {kV, packed + v_offset},
        {kOut, static_cast<char*>(const_cast<void*>(out)) + first * out_row},
        {kDout, static_cast<char*>(const_cast<void*>(dout)) + first * out_row},
        {kStats, const_cast<float*>(lse) + first * dims.H * dims.T},
        {kDq, dpacked},
        {kDk, dpacked + k_offset},
        {kDv, dpacked + v_offset}};
    graphs_->execute(g, pointers, workspace, stream);
  }
  return true;
}

int64_t CudnnAttention::workspace_needed(const AttentionShape& dims, bool backward) {
  const int64_t rows = backward ? attention_backward_chunk_rows(rule_, dims) : dims.B;
  return graphs_->graph(with_rows(dims, rows), backward).workspace;
}

std::string CudnnAttention::why_declined(const AttentionShape& dims, bool backward) {
  const int64_t rows = backward ? attention_backward_chunk_rows(rule_, dims) : dims.B;
  return graphs_->graph(with_rows(dims, rows), backward).declined;
}

}  // namespace llmft::cuda
