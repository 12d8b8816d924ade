// The CPU threads a rank takes when --threads is 0: its share of the CPUs it may run on,
// divided with the ranks of its node that may run on them too. OpenMP sizes a team by
// the process's CPU affinity, so without this `mpirun -np 8` on a node starts eight
// teams of every core (or of a socket's, bound by socket), and the host-side kernels (the
// CPU backend's; the offloaded optimizer's update beside GPUs) fight over the cores.
// OMP_NUM_THREADS, when set, is the user's choice and wins.
#pragma once

#include <cstddef>
#include <vector>

namespace llmft {

class MpiRuntime;

// The CPUs this process may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

// Rank `me`'s share of the CPUs in masks[me]: each counts 1 / (the ranks whose masks hold
// it); the sum rounded down, and at least 1. masks[r]: rank r's CPUs.
int cpu_share(const std::vector<std::vector<int>>& masks, size_t me);

// The threads for --threads 0: OMP_NUM_THREADS's count when it is set (0, OpenMP's own
// choice, when that is no count), else this rank's cpu_share among the ranks of its
// node. Collective over the node.
int default_threads(const MpiRuntime& mpi);

}  // namespace llmft
