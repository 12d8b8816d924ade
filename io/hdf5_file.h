// Hdf5File: one HDF5 file that the ranks of an MPI communicator open together (parallel
// HDF5 over MPI-IO), holding whole-tensor datasets that each rank writes or reads in
// pieces: the flat ranges of the tensor it owns or needs. Datasets are chunked with HDF5's
// Fletcher32 checksum, which every read verifies, and carry a digest of their values
// (io/value_digest.h) that every read verifies end to end: the values as read, in the
// number type, dtype and shape the reader expects. Names may hold '/' (groups are made on
// the way). Attributes are strings on the file's root.
//
// Every call that takes part in a collective (create, open, create_dataset, write, read,
// set_attribute, agree, close) must be made by every rank of the communicator in the same
// order, with the same name; a rank with no piece passes no ranges. Each of them ends with
// the ranks agreeing (io/file_agreement.h): when any rank failed, every rank throws the same
// llmft::Error, naming the file and the dataset or attribute, so that the ranks never part
// between collectives. Waits inside HDF5 that llmft cannot interrupt are bounded by
// io/stall_watchdog.h; both bounds are the job's --comm-timeout.
// Thread-safety: one thread.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/file_agreement.h"
#include "io/flat_blocks.h"

namespace llmft::io {

// How a dataset's elements are stored: f32, or a 16-bit float's bits (bf16 and fp16, with
// the float type named in the dataset's "dtype" attribute).
enum class H5Element { f32, bits16 };

// The most elements a dataset's chunk holds (16 MiB of f32): each chunk carries its own
// Fletcher32 checksum.
constexpr int64_t kMaxChunkElements = int64_t{1} << 22;

class Hdf5File {
 public:
  // Creates (or truncates) `path` for every rank of `comm`; `timeout_seconds` bounds every
  // wait of the file's collectives.
  static Hdf5File create(const std::string& path, MPI_Comm comm, double timeout_seconds);
  // Opens `path` read-only for every rank of `comm`.
  static Hdf5File open(const std::string& path, MPI_Comm comm, double timeout_seconds);
  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&&) = delete;
  Hdf5File(const Hdf5File&) = delete;
  ~Hdf5File();

  const std::string& path() const { return path_; }

  // A dataset of `shape` (1 or 2 dimensions, at least one element); `dtype_name` goes to
  // its "dtype" attribute ("f32", "bf16", "fp16").
  void create_dataset(const std::string& name, H5Element element, const Shape& shape,
                      const std::string& dtype_name);
  bool has_dataset(const std::string& name) const;
  Shape dataset_shape(const std::string& name) const;
  std::string dataset_dtype(const std::string& name) const;
  // Writes this rank's `ranges` (sorted, disjoint) of `name`, their elements in `values`
  // one range after another, then the dataset's digest. The ranks' ranges together cover
  // the dataset, each element once.
  void write(const std::string& name, H5Element element, const std::vector<FlatRange>& ranges,
             const void* values);
  // Reads this rank's `ranges` (sorted, disjoint) into `values`, verifying the checksums,
  // then verifies the dataset's digest over the ranks' `verify` ranges: each a subset of
  // that rank's `ranges`, and together covering the dataset, each element once.
  void read(const std::string& name, H5Element element, const std::vector<FlatRange>& ranges,
            void* values, const std::vector<FlatRange>& verify);

  // Collective: `local_failure` is this rank's error in work of its own between two file
  // calls ("" when none); throws on every rank alike when any rank failed.
  void agree(const std::string& local_failure) const { agreement_.agree(local_failure); }

  void set_attribute(const std::string& name, const std::string& value);
  bool has_attribute(const std::string& name) const;
  std::string attribute(const std::string& name) const;

  // Flushes and closes; the destructor closes too but cannot report a failure.
  void close();

 private:
  Hdf5File(std::string path, hid_t file, MPI_Comm comm, double timeout_seconds);
  hid_t open_dataset(const std::string& name) const;
  void make_dataset(const std::string& name, H5Element element, const Shape& shape,
                    const std::string& dtype_name);
  // Runs `call` (an HDF5 call that may wait in a collective) under the stall watchdog;
  // `what` names it.
  template <typename Call>
  auto guarded(const std::string& what, Call call) const;
  uint64_t stored_digest(hid_t dataset, const std::string& name) const;

  std::string path_;
  hid_t file_ = -1;
  FileAgreement agreement_;
  hid_t collective_ = -1;  // transfer property list: collective MPI-IO
};

}  // namespace llmft::io
