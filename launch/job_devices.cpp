#include "launch/job_devices.h"

#include <cstdio>

#include "comm/communicator_registry.h"
#include "comm/mpi_gather_strings.h"
#include "comm/mpi_node_order.h"
#include "core/backend_registry.h"
#include "core/byte_size.h"
#include "core/error.h"

namespace llmft {
namespace {

// Rank 0 names each tensor-parallel group `mesh` made, with its ranks' hosts, as read back
// from every rank's place in the mesh; on stderr, since stdout is the JSON line alone
// under `llmft eval --json`. Collective over MPI_COMM_WORLD.
void report_tp_groups(const Mesh& mesh, const NodeOrder& nodes, bool lead) {
  const int tp = mesh.shape().tp;
  const std::vector<std::string> places =
      mpi_gather_strings(MPI_COMM_WORLD, std::to_string(mesh.dp_rank() * tp + mesh.tp_rank()));
  NodeOrder made = nodes;
  for (size_t rank = 0; rank < places.size(); ++rank) {
    made.ranks[std::stoul(places[rank])] = static_cast<int>(rank);
  }
  if (!lead) return;
  std::fprintf(stderr, "llmft: tensor-parallel groups: %s%s\n", made.groups_text(tp).c_str(),
               nodes.is_rank_order() ? "" : " (the ranks taken node by node)");
}

}  // namespace

JobDevices start_devices(const TrainOptions& o, MpiRuntime& mpi, DType dtype) {
  JobDevices devices;
  devices.requested_memory = parse_byte_size(o.device_memory, "--device-memory");
  NodePlacement placement{mpi.local_rank(), mpi.local_size(), o.share_devices, {}, {}};
  if (mpi.local_size() > 1) {
    placement.node_gather = [&mpi](const std::string& value) { return mpi.node_gather(value); };
    if (o.share_devices) placement.node_barrier = [&mpi] { mpi.node_barrier(); };
  }
  devices.backend = make_backend(o.device, placement, devices.requested_memory);
  // Communicators are created and warmed before the backend reserves its memory (at the
  // first memory() or memory_capacity()), so that their own buffers (NCCL's) are in place
  // beside it and measured (Backend::communicator_overhead).
  if (mpi.size() > 1) {
    devices.world = make_world_communicator(o.comm, o.comm_timeout, *devices.backend);
    devices.world->warm_up(dtype);
  }
  if (o.threads > 0) devices.backend->set_threads(o.threads);
  return devices;
}

JobMesh split_mesh(const TrainOptions& o, Communicator* world, int world_size,
                   const ModelConfig& config, DType dtype) {
  JobMesh m;
  m.shape = mesh_shape(world_size, o.tp, config);
  LLMFT_REQUIRE(o.dp == 0 || o.dp == m.shape.dp,
                "--dp " << o.dp << " with " << world_size << " ranks and --tp " << m.shape.tp
                        << ": --dp must be " << m.shape.dp << " (ranks / --tp), or 0");
  if (world == nullptr) return m;
  Communicator* mesh_world = world;
  NodeOrder nodes;  // with tp > 1
  if (m.shape.tp > 1) {
    nodes = mpi_node_order();
    if (!nodes.is_rank_order()) {
      m.node_major_world = world->split(0, nodes.place);
      mesh_world = m.node_major_world.get();
    }
  }
  m.mesh = std::make_unique<Mesh>(*mesh_world, m.shape);
  if (nodes.node_count() > 1) report_tp_groups(*m.mesh, nodes, world->rank() == 0);
  if (m.shape.dp > 1) m.data_parallel = &m.mesh->data_parallel();
  if (m.shape.tp > 1) m.tensor_parallel = &m.mesh->tensor_parallel();
  for (Communicator* group : {m.data_parallel, m.tensor_parallel}) {
    if (group) group->warm_up(dtype);
  }
  return m;
}

ModelOptions model_options_for(const TrainOptions& o, const JobMesh& mesh) {
  ModelOptions options(false, mesh.tp_slice(), mesh.tensor_parallel);
  options.checkpointed_blocks = o.checkpointed_blocks;
  options.sequence_parallel = o.sequence;
  return options;
}

void check_vocab(const io::TokenFile& file, const ModelConfig& config, const std::string& option) {
  LLMFT_REQUIRE(file.vocab_size() == config.vocab_size,
                option << " " << file.path() << " was tokenized with a vocabulary of "
                       << file.vocab_size() << " but --model " << config.name << " has "
                       << config.vocab_size
                       << "; prepare the data with the model's tokenizer or pick a matching model");
}

}  // namespace llmft
