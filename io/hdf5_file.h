// Hdf5File: one HDF5 file that the ranks of an MPI communicator open together (parallel
// HDF5 over MPI-IO), holding whole-tensor datasets that each rank writes or reads in
// pieces: the flat ranges of the tensor it owns or needs. Datasets are chunked with HDF5's
// Fletcher32 checksum, which every read verifies. Names may hold '/' (groups are made on
// the way). Attributes are strings on the file's root.
//
// Every call that takes part in a collective (create, open, create_dataset, write,
// set_attribute, close) must be made by every rank of the communicator in the same order,
// with the same name; a rank with no piece passes no ranges. Writes are collective (HDF5
// writes checksummed chunks only so); reads are independent, each rank reading its own
// blocks (io/flat_blocks.h), though every rank still calls read() for every dataset.
// Errors throw llmft::Error naming the file and the dataset or attribute.
// Thread-safety: one thread.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/flat_blocks.h"

namespace llmft::io {

// How a dataset's elements are stored: f32, or a 16-bit float's bits (bf16 and fp16, with
// the float type named in the dataset's "dtype" attribute).
enum class H5Element { f32, bits16 };

class Hdf5File {
 public:
  // Creates (or truncates) `path` for every rank of `comm`.
  static Hdf5File create(const std::string& path, MPI_Comm comm);
  // Opens `path` read-only for every rank of `comm`.
  static Hdf5File open(const std::string& path, MPI_Comm comm);
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
  // one range after another.
  void write(const std::string& name, H5Element element, const std::vector<FlatRange>& ranges,
             const void* values);
  // Reads this rank's `ranges` (sorted, disjoint) into `values`, verifying the checksums.
  void read(const std::string& name, H5Element element, const std::vector<FlatRange>& ranges,
            void* values);

  void set_attribute(const std::string& name, const std::string& value);
  bool has_attribute(const std::string& name) const;
  std::string attribute(const std::string& name) const;

  // Flushes and closes; the destructor closes too but cannot report a failure.
  void close();

 private:
  Hdf5File(std::string path, hid_t file, MPI_Comm comm);
  hid_t open_dataset(const std::string& name) const;

  std::string path_;
  hid_t file_ = -1;
  MPI_Comm comm_;
  hid_t collective_ = -1;  // transfer property list: collective MPI-IO
};

}  // namespace llmft::io
