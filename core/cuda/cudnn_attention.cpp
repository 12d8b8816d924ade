// CudnnAttention with cuDNN (core/cuda/cudnn_attention.h): SDPA graphs of cudnn-frontend.
// Compiled only when CMake's LLMFT_CUDNN is on.
#include "core/cuda/cudnn_attention.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft::cuda {
namespace {

namespace fe = cudnn_frontend;

// The graphs' tensors, named by the uids their variant packs use; the packed documents'
// lengths and ragged offsets after them.
enum TensorUid : int64_t {
  kQ = 1,
  kK,
  kV,
  kOut,
  kStats,
  kDout,
  kDq,
  kDk,
  kDv,
  kSeqLenQ,
  kSeqLenKv,
  kQOffsets,
  kKOffsets,
  kVOffsets,
  kOutOffsets,
  kStatsOffsets,
};

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

// The softmax statistics: lse(B, H, T) f32, as (B, H, T, 1); for packed documents in
// cuDNN's token-major order, lse[token H + head].
void lay_out_stats(fe::graph::Tensor_attributes& stats, const AttentionShape& d, bool documents) {
  stats.set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({d.B, d.H, d.T, 1})
      .set_stride(documents ? std::vector<int64_t>{d.H * d.T, 1, d.H, 1}
                            : std::vector<int64_t>{d.H * d.T, d.T, 1, 1});
}

// A packed-documents call's index tensors, (N, 1, 1, 1) or (N + 1, 1, 1, 1) in the
// document table.
std::shared_ptr<fe::graph::Tensor_attributes> index_tensor(Graph& g, const char* name, int64_t uid,
                                                           int64_t n, fe::DataType_t type) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({n, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(type));
}

// The documents of a call over d.B (padded) documents: their lengths, for the padding
// mask, and the ragged offsets (elements from the call's first token) of each tensor.
struct DocumentIndex {
  std::shared_ptr<fe::graph::Tensor_attributes> seq_len_q, seq_len_kv, q, k, v, out, stats;
};

DocumentIndex document_index(Graph& g, const AttentionShape& d) {
  const auto i32 = fe::DataType_t::INT32, i64 = fe::DataType_t::INT64;
  return {index_tensor(g, "seq_len_q", kSeqLenQ, d.B, i32),
          index_tensor(g, "seq_len_kv", kSeqLenKv, d.B, i32),
          index_tensor(g, "q_offsets", kQOffsets, d.B + 1, i64),
          index_tensor(g, "k_offsets", kKOffsets, d.B + 1, i64),
          index_tensor(g, "v_offsets", kVOffsets, d.B + 1, i64),
          index_tensor(g, "out_offsets", kOutOffsets, d.B + 1, i64),
          index_tensor(g, "stats_offsets", kStatsOffsets, d.B + 1, i64)};
}

void set_ragged(const QkvTensors& t, const DocumentIndex& index) {
  t.q->set_ragged_offset(index.q);
  t.k->set_ragged_offset(index.k);
  t.v->set_ragged_offset(index.v);
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

// Forward: out and the softmax statistics (lse) from q, k, v; causal from the top left
// (of each document, for packed documents).
std::shared_ptr<Graph> forward_graph(const AttentionShape& d, bool documents) {
  auto g = new_graph(d.type);
  const QkvTensors in = qkv_inputs(*g, d);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(true)
                     .set_causal_mask(true)
                     .set_attn_scale(attention_scale(d));
  std::optional<DocumentIndex> index;
  if (documents) {
    index = document_index(*g, d);
    set_ragged(in, *index);
    // The composite lowering: the one Transformer Engine runs ragged statistics through
    // (frontend 1.32 may otherwise pick its unified engine, untried with them on 9.19).
    options.set_padding_mask(true)
        .set_seq_len_q(index->seq_len_q)
        .set_seq_len_kv(index->seq_len_kv)
        .set_implementation(fe::AttentionImplementation_t::COMPOSITE);
  }
  auto [out, stats] = g->sdpa(in.q, in.k, in.v, options);
  set_output(out, kOut, qkv_dims(d, d.H), out_strides(d));
  stats->set_output(true);
  lay_out_stats(*stats, d, documents);
  if (index) {
    out->set_ragged_offset(index->out);
    stats->set_ragged_offset(index->stats);
  }
  return g;
}

// Backward: dq, dk, dv (into the packed dqkv) from q, k, v, out, dout and the statistics.
std::shared_ptr<Graph> backward_graph(const AttentionShape& d, bool deterministic, bool documents) {
  auto g = new_graph(d.type);
  const QkvTensors in = qkv_inputs(*g, d);
  auto out = input(*g, "out", kOut, qkv_dims(d, d.H), out_strides(d));
  auto dout = input(*g, "dout", kDout, qkv_dims(d, d.H), out_strides(d));
  auto stats = g->tensor(fe::graph::Tensor_attributes().set_name("stats"));
  lay_out_stats(*stats, d, documents);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_causal_mask(true)
                     .set_attn_scale(attention_scale(d))
                     .set_deterministic_algorithm(deterministic);
  std::optional<DocumentIndex> index;
  if (documents) {
    index = document_index(*g, d);
    set_ragged(in, *index);
    out->set_ragged_offset(index->out);
    dout->set_ragged_offset(index->out);
    stats->set_ragged_offset(index->stats);
    options.set_padding_mask(true)
        .set_seq_len_q(index->seq_len_q)
        .set_seq_len_kv(index->seq_len_kv);
  }
  auto [dq, dk, dv] = g->sdpa_backward(in.q, in.k, in.v, out, dout, stats, options);
  set_output(dq, kDq, qkv_dims(d, d.H), qkv_strides(d));
  set_output(dk, kDk, qkv_dims(d, d.KVH), qkv_strides(d));
  set_output(dv, kDv, qkv_dims(d, d.KVH), qkv_strides(d));
  if (index) set_ragged({dq, dk, dv}, *index);
  return g;
}

// Pointers to a call's q, k and v (or dq, dk, dv: uids) in packed qkv rows from `first`.
void add_qkv(std::unordered_map<int64_t, void*>& pointers, const int64_t (&uids)[3], void* first,
             const AttentionShape& d) {
  const int64_t head_bytes = d.D * static_cast<int64_t>(dtype_size(d.type));
  char* base = static_cast<char*>(first);
  pointers[uids[0]] = base;
  pointers[uids[1]] = base + d.H * head_bytes;
  pointers[uids[2]] = base + (d.H + d.KVH) * head_bytes;
}

constexpr int64_t kQkvUids[3] = {kQ, kK, kV};
constexpr int64_t kDqkvUids[3] = {kDq, kDk, kDv};

// `offset` bytes past `p` (variant packs take non-const pointers).
char* bytes_at(const void* p, int64_t offset) {
  return static_cast<char*>(const_cast<void*>(p)) + offset;
}

// Bytes a token takes in qkv, out and the statistics.
struct TokenBytes {
  int64_t qkv, out, stats;
  explicit TokenBytes(const AttentionShape& d)
      : qkv((d.H + 2 * d.KVH) * d.D * static_cast<int64_t>(dtype_size(d.type))),
        out(d.H * d.D * static_cast<int64_t>(dtype_size(d.type))),
        stats(d.H * static_cast<int64_t>(sizeof(float))) {}
};

// One call over a chunk of packed documents, and where its index arrays are in the table
// (bytes from its start).
struct ChunkCall {
  DocumentChunk chunk;
  int64_t first_token = 0;
  size_t seq_len = 0, qkv_offsets = 0, out_offsets = 0, stats_offsets = 0;
};

// Appends `values` to `table` on a 16-byte boundary; returns where they start.
template <typename T>
size_t append(std::vector<uint8_t>& table, const std::vector<T>& values) {
  table.resize((table.size() + kAlignment - 1) / kAlignment * kAlignment);
  const size_t at = table.size();
  table.resize(at + values.size() * sizeof(T));
  std::memcpy(table.data() + at, values.data(), values.size() * sizeof(T));
  return at;
}

// Whether two calls' rows and documents are the same.
bool same_rows(const AttentionShape& a, const AttentionShape& b) {
  return a.type == b.type && a.B == b.B && a.T == b.T && a.H == b.H && a.KVH == b.KVH && a.D == b.D;
}

bool same_documents(const std::vector<AttentionDocument>& a,
                    const std::vector<AttentionDocument>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first_token == y.first_token && x.length == y.length;
  });
}

}  // namespace

struct CudnnAttention::Graphs {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool>;
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
  void* document_table = nullptr;
  std::map<Key, Built> built;  // per dtype, shape, direction and layout
  // The packed documents the device table holds, and their calls.
  AttentionShape table_rows;
  std::vector<AttentionDocument> table_documents;
  std::vector<ChunkCall> table_calls;

  // The graph for this call (backward: for a chunk of rows; documents: a call over packed
  // documents), built on first use.
  const Built& graph(const AttentionShape& d, bool backward, bool documents = false) {
    const Key key{static_cast<int>(d.type), d.B, d.T, d.H, d.KVH, d.D, backward, documents};
    auto found = built.find(key);
    if (found == built.end()) found = built.emplace(key, build(d, backward, documents)).first;
    return found->second;
  }

  // The calls over these documents of `rows`, their index arrays queued to the device
  // table on `stream` (unless it holds them already); null, with nothing queued, when cuDNN
  // does not take every call in both directions within the workspace the rows unpacked
  // get, or the table cannot hold them.
  const std::vector<ChunkCall>* document_calls(const AttentionShape& rows,
                                               const std::vector<AttentionDocument>& documents,
                                               CudaStream stream) {
    if (!table_calls.empty() && same_rows(rows, table_rows) &&
        same_documents(documents, table_documents)) {
      return &table_calls;
    }
    const int64_t budget = static_cast<int64_t>(attention_backward_workspace_bytes(rule, rows));
    const int64_t W = (rows.H + 2 * rows.KVH) * rows.D;
    const TokenBytes token_bytes(rows);
    std::vector<ChunkCall> calls;
    std::vector<uint8_t> table;
    for (const DocumentChunk& chunk : document_chunks(
             documents, rule, rows, static_cast<size_t>(budget), pads_document_counts())) {
      // The call's tensors start at its first token, the statistics too (4 H bytes a token):
      // checked before any graph is built for it.
      const int64_t first_token = documents[chunk.first].first_token;
      if (first_token * token_bytes.stats % static_cast<int64_t>(kAlignment) != 0) {
        return nullptr;
      }
      const AttentionShape shape = chunk_shape(rows, chunk);
      const Built& backward = graph(shape, true, true);
      if (graph(shape, false, true).graph == nullptr || backward.graph == nullptr ||
          backward.workspace > budget) {
        return nullptr;
      }
      // Lengths, then token offsets from the chunk's first token; the padding documents are
      // empty and start at the chunk's end.
      const AttentionDocument& last = documents[chunk.first + chunk.count - 1];
      const int64_t end = last.first_token + last.length - first_token;
      std::vector<int32_t> lengths(chunk.padded_count, 0);
      std::vector<int64_t> tokens(chunk.padded_count + 1, end);
      for (int64_t i = 0; i < chunk.count; ++i) {
        lengths[i] = static_cast<int32_t>(documents[chunk.first + i].length);
        tokens[i] = documents[chunk.first + i].first_token - first_token;
      }
      auto scaled = [&](int64_t per_token) {
        std::vector<int64_t> offsets(tokens);
        for (int64_t& o : offsets) o *= per_token;
        return offsets;
      };
      ChunkCall call{chunk, first_token};
      call.seq_len = append(table, lengths);
      call.qkv_offsets = append(table, scaled(W));
      call.out_offsets = append(table, scaled(rows.H * rows.D));
      call.stats_offsets = append(table, scaled(rows.H));
      calls.push_back(call);
    }
    if (table.size() > kDocumentTableBytes) return nullptr;
    // From pageable memory the copy has read `table` when it returns.
    LLMFT_CUDA_CHECK(cudaMemcpyAsync(document_table, table.data(), table.size(),
                                     cudaMemcpyHostToDevice, stream));
    table_rows = rows;
    table_documents = documents;
    table_calls = std::move(calls);
    return &table_calls;
  }

  // A call's index tensors in the table.
  void add_index(std::unordered_map<int64_t, void*>& pointers, const ChunkCall& call) const {
    char* table = static_cast<char*>(document_table);
    pointers[kSeqLenQ] = pointers[kSeqLenKv] = table + call.seq_len;
    pointers[kQOffsets] = pointers[kKOffsets] = pointers[kVOffsets] = table + call.qkv_offsets;
    pointers[kOutOffsets] = table + call.out_offsets;
    pointers[kStatsOffsets] = table + call.stats_offsets;
  }

  // The most workspace a plan for this call may ask: a chunk of rows' bound, or a
  // documents call's whole bound (its chunk was cut to fit).
  int64_t workspace_limit(const AttentionShape& d, bool backward, bool documents) const {
    if (!backward) return static_cast<int64_t>(kForwardWorkspaceBytes);
    return static_cast<int64_t>(documents ? attention_workspace_bound(rule, d)
                                          : attention_backward_workspace_bytes(rule, d));
  }

  Built build(const AttentionShape& d, bool backward, bool documents) const {
    if (!cudnn_takes_attention(d)) {
      return {nullptr, -1,
              "not 16-bit, a head size not a multiple of 8 up to 128, or H % KVH != 0"};
    }
    const bool deterministic = rule == AttentionWorkspaceRule::cudnn_deterministic;
    const int64_t limit = workspace_limit(d, backward, documents);
    std::shared_ptr<Graph> g;
    // The frontend's descriptors throw where its graph calls return errors, and its
    // attention node throws std::runtime_error where no implementation fits.
    try {
      g = backward ? backward_graph(d, deterministic, documents) : forward_graph(d, documents);
      g->deselect_workspace_greater_than(limit);
      fe::error_t status = g->build(handle, {fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
      if (status.is_bad()) return {nullptr, -1, status.get_message()};
    } catch (const std::exception& e) {
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

bool CudnnAttention::pads_document_counts() {
  return cudnnGetVersion() >= 92500;
}

CudnnAttention::CudnnAttention(bool deterministic)
    : rule_(deterministic ? AttentionWorkspaceRule::cudnn_deterministic
                          : AttentionWorkspaceRule::cudnn_nondeterministic),
      graphs_(std::make_unique<Graphs>()) {
  graphs_->rule = rule_;
  check_cudnn(cudnnCreate(&graphs_->handle), "cudnnCreate");
  cudaError_t allocated = cudaMalloc(&graphs_->forward_workspace, kForwardWorkspaceBytes);
  if (allocated == cudaSuccess) {
    allocated = cudaMalloc(&graphs_->document_table, kDocumentTableBytes);
    if (allocated != cudaSuccess) cudaFree(graphs_->forward_workspace);
  }
  if (allocated != cudaSuccess) cudnnDestroy(graphs_->handle);  // no destructor runs then
  LLMFT_CUDA_CHECK(allocated);
}

CudnnAttention::~CudnnAttention() {
  // Destructors cannot throw; these fail only when the context is already gone.
  cudaFree(graphs_->document_table);
  cudaFree(graphs_->forward_workspace);
  cudnnDestroy(graphs_->handle);
}

bool CudnnAttention::forward(void* out, float* lse, const void* qkv, const AttentionShape& dims,
                             CudaStream stream) {
  if (!aligned(out) || !aligned(lse) || !aligned(qkv)) return false;
  Graph* g = graphs_->graph(dims, false).graph.get();
  if (g == nullptr) return false;
  std::unordered_map<int64_t, void*> pointers{{kOut, out}, {kStats, lse}};
  add_qkv(pointers, kQkvUids, bytes_at(qkv, 0), dims);
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
  const TokenBytes bytes(dims);
  for (int64_t first = 0; first < dims.B; first += chunk) {
    const int64_t rows = std::min(chunk, dims.B - first);
    Graph& g = *graphs_->graph(with_rows(dims, rows), true).graph;
    const int64_t token = first * dims.T;
    std::unordered_map<int64_t, void*> pointers{{kOut, bytes_at(out, token * bytes.out)},
                                                {kDout, bytes_at(dout, token * bytes.out)},
                                                {kStats, bytes_at(lse, token * bytes.stats)}};
    add_qkv(pointers, kQkvUids, bytes_at(qkv, token * bytes.qkv), dims);
    add_qkv(pointers, kDqkvUids, bytes_at(dqkv, token * bytes.qkv), dims);
    graphs_->execute(g, pointers, workspace, stream);
  }
  return true;
}

bool CudnnAttention::forward_documents(void* out, float* lse, const void* qkv,
                                       const AttentionShape& rows,
                                       const std::vector<AttentionDocument>& documents,
                                       CudaStream stream) {
  if (!aligned(out) || !aligned(lse) || !aligned(qkv) || !cudnn_takes_attention(rows)) {
    return false;
  }
  const std::vector<ChunkCall>* calls = graphs_->document_calls(rows, documents, stream);
  if (calls == nullptr) return false;
  const TokenBytes bytes(rows);
  for (const ChunkCall& call : *calls) {
    Graph& g = *graphs_->graph(chunk_shape(rows, call.chunk), false, true).graph;
    std::unordered_map<int64_t, void*> pointers{
        {kOut, bytes_at(out, call.first_token * bytes.out)},
        {kStats, bytes_at(lse, call.first_token * bytes.stats)}};
    add_qkv(pointers, kQkvUids, bytes_at(qkv, call.first_token * bytes.qkv), rows);
    graphs_->add_index(pointers, call);
    graphs_->execute(g, pointers, graphs_->forward_workspace, stream);
  }
  return true;
}

bool CudnnAttention::backward_documents(void* dqkv, const void* dout, const void* qkv,
                                        const void* out, const float* lse,
                                        const AttentionShape& rows,
                                        const std::vector<AttentionDocument>& documents,
                                        void* workspace, size_t workspace_bytes,
                                        CudaStream stream) {
  if (!aligned(dqkv) || !aligned(dout) || !aligned(qkv) || !aligned(out) || !aligned(lse) ||
      !cudnn_takes_attention(rows)) {
    return false;
  }
  const std::vector<ChunkCall>* calls = graphs_->document_calls(rows, documents, stream);
  if (calls == nullptr) return false;
  for (const ChunkCall& call : *calls) {
    const Graphs::Built& built = graphs_->graph(chunk_shape(rows, call.chunk), true, true);
    if (built.workspace > static_cast<int64_t>(workspace_bytes)) return false;
  }
  const TokenBytes bytes(rows);
  for (const ChunkCall& call : *calls) {
    Graph& g = *graphs_->graph(chunk_shape(rows, call.chunk), true, true).graph;
    std::unordered_map<int64_t, void*> pointers{
        {kOut, bytes_at(out, call.first_token * bytes.out)},
        {kDout, bytes_at(dout, call.first_token * bytes.out)},
        {kStats, bytes_at(lse, call.first_token * bytes.stats)}};
    add_qkv(pointers, kQkvUids, bytes_at(qkv, call.first_token * bytes.qkv), rows);
    add_qkv(pointers, kDqkvUids, bytes_at(dqkv, call.first_token * bytes.qkv), rows);
    graphs_->add_index(pointers, call);
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
