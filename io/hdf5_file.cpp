#include "io/hdf5_file.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "io/flat_blocks.h"
#include "io/stall_watchdog.h"
#include "io/value_digest.h"

namespace llmft::io {
namespace {

// Silences HDF5's own error printing once: errors become llmft::Error messages instead.
void quiet_hdf5() {
  static const bool quiet = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)quiet;
}

void require(bool ok, const std::string& path, const std::string& what) {
  LLMFT_REQUIRE(ok, "HDF5: " << what << " in " << path << " failed");
}

// An HDF5 identifier closed by `close` when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

hid_t type_of(H5Element element) {
  return element == H5Element::f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT16;
}

std::string rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return std::to_string(rank);
}

size_t width_of(H5Element element) {
  return element == H5Element::f32 ? 4 : 2;
}

constexpr const char* kDigestAttribute = "digest";

// Writes the string attribute `name` = `value` on `object` (the file or a dataset).
bool write_text_attribute(hid_t object, const std::string& name, const std::string& value) {
  const Handle text(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!text.valid() || H5Tset_size(text.get(), std::max<size_t>(value.size(), 1)) < 0) return false;
  const Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  const Handle attribute(
      H5Acreate2(object, name.c_str(), text.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const std::string stored = value.empty() ? std::string(1, '\0') : value;
  return attribute.valid() && H5Awrite(attribute.get(), text.get(), stored.data()) >= 0;
}

// The string attribute `name` of `object`; false when it is missing or unreadable.
bool read_text_attribute(hid_t object, const std::string& name, std::string& value) {
  if (H5Aexists(object, name.c_str()) <= 0) return false;
  const Handle attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attribute.valid()) return false;
  const Handle type(H5Aget_type(attribute.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Tis_variable_str(type.get()) != 0)
    return false;
  value.assign(H5Tget_size(type.get()), '\0');
  if (H5Aread(attribute.get(), type.get(), value.data()) < 0) return false;
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return true;
}

// A dataspace of the block's shape (`dims` tells the rank), for the memory side of a transfer.
hid_t block_space(const Block& b, size_t rank) {
  const hsize_t dims[2] = {static_cast<hsize_t>(b.rows), static_cast<hsize_t>(b.cols)};
  return rank == 1 ? H5Screate_simple(1, &dims[1], nullptr) : H5Screate_simple(2, dims, nullptr);
}

// Selects block `b` of a file dataspace of `rank` dimensions.
bool select_block(hid_t space, const Block& b, size_t rank) {
  const hsize_t start[2] = {static_cast<hsize_t>(b.row), static_cast<hsize_t>(b.col)};
  const hsize_t count[2] = {static_cast<hsize_t>(b.rows), static_cast<hsize_t>(b.cols)};
  return rank == 1
             ? H5Sselect_hyperslab(space, H5S_SELECT_SET, &start[1], nullptr, &count[1], nullptr) >=
                   0
             : H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0;
}

}  // namespace

Hdf5File::Hdf5File(std::string path, hid_t file, MPI_Comm comm, double timeout_seconds)
    : path_(std::move(path)), file_(file), agreement_(comm, timeout_seconds, path_) {
  collective_ = H5Pcreate(H5P_DATASET_XFER);
  require(collective_ >= 0 && H5Pset_dxpl_mpio(collective_, H5FD_MPIO_COLLECTIVE) >= 0, path_,
          "setting collective transfers");
}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept
    : path_(std::move(other.path_)),
      file_(std::exchange(other.file_, -1)),
      agreement_(other.agreement_),
      collective_(std::exchange(other.collective_, -1)) {}

// The watchdog waits longer than the agreement: a rank that failed a call and then waits in
// vain for the others to agree reports its own error, and ends the job, first.
constexpr double kWatchdogGraceSeconds = 10;

template <typename Call>
auto Hdf5File::guarded(const std::string& what, Call call) const {
  const StallGuard guard(what + " of " + path_,
                         agreement_.timeout_seconds() + kWatchdogGraceSeconds);
  return call();
}

Hdf5File Hdf5File::create(const std::string& path, MPI_Comm comm, double timeout_seconds) {
  quiet_hdf5();
  // Every rank must reach the file, or those that do would create it without the others.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  FileAgreement(comm, timeout_seconds, path)
      .agree(::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0
                 ? ""
                 : "cannot create the checkpoint file " + path + ": rank " + rank_in(comm) +
                       " cannot write its directory (is it on a file system every node sees?)");
  const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  require(access.valid() && H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL) >= 0, path,
          "setting up MPI-IO");
  const hid_t file = [&] {
    const StallGuard guard("creating " + path, timeout_seconds + kWatchdogGraceSeconds);
    return H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  }();
  Hdf5File created(path, file, comm, timeout_seconds);
  created.agree(file >= 0 ? ""
                          : "cannot create the checkpoint file " + path +
                                ": check that its directory exists and is writable");
  return created;
}

Hdf5File Hdf5File::open(const std::string& path, MPI_Comm comm, double timeout_seconds) {
  quiet_hdf5();
  // Every rank must reach the file, or those that do would open it without the others.
  FileAgreement(comm, timeout_seconds, path)
      .agree(::access(path.c_str(), R_OK) == 0
                 ? ""
                 : "cannot open the checkpoint " + path + ": rank " + rank_in(comm) +
                       " cannot read it (it is missing, or not on a file system every node "
                       "sees)");
  const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  require(access.valid() && H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL) >= 0, path,
          "setting up MPI-IO");
  const hid_t file = [&] {
    const StallGuard guard("opening " + path, timeout_seconds + kWatchdogGraceSeconds);
    return H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  }();
  Hdf5File opened(path, file, comm, timeout_seconds);
  opened.agree(file >= 0 ? ""
                         : "cannot open the checkpoint " + path +
                               " as HDF5: it is missing, unreadable, or not an HDF5 file");
  return opened;
}

Hdf5File::~Hdf5File() {
  if (collective_ >= 0) H5Pclose(collective_);
  // Closing is a collective: after the ranks parted it would wait for ranks that never come.
  if (file_ >= 0 && !agreement_.parted()) guarded("closing", [this] { return H5Fclose(file_); });
}

void Hdf5File::close() {
  if (collective_ >= 0) H5Pclose(std::exchange(collective_, -1));
  if (file_ < 0) return;
  const bool flushed =
      guarded("flushing", [this] { return H5Fflush(file_, H5F_SCOPE_GLOBAL); }) >= 0;
  agree(flushed ? "" : "HDF5: flushing " + path_ + " failed (is the disk full?)");
  const bool closed =
      guarded("closing", [this] { return H5Fclose(std::exchange(file_, -1)); }) >= 0;
  agree(closed ? "" : "HDF5: closing " + path_ + " failed (is the disk full?)");
}

void Hdf5File::create_dataset(const std::string& name, H5Element element, const Shape& shape,
                              const std::string& dtype_name) {
  agree(failure_of([&] { make_dataset(name, element, shape, dtype_name); }));
}

void Hdf5File::make_dataset(const std::string& name, H5Element element, const Shape& shape,
                            const std::string& dtype_name) {
  LLMFT_REQUIRE(!shape.empty() && shape.size() <= 2 && shape_numel(shape) > 0,
                "internal: checkpoint dataset '" << name << "' of shape " << shape_string(shape));
  std::vector<hsize_t> dims(shape.begin(), shape.end()), chunk = dims;
  // Chunks of at most kChunkElements (whole rows), all of about the same size: an edge
  // chunk takes a whole chunk's space on disk.
  const hsize_t row = dims.size() == 2 ? dims[1] : 1;
  const hsize_t rows_per_chunk = std::max<hsize_t>(1, kMaxChunkElements / row);
  const hsize_t chunks = (dims[0] + rows_per_chunk - 1) / rows_per_chunk;
  chunk[0] = (dims[0] + chunks - 1) / chunks;
  const Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose);
  const Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  const Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  require(space.valid() && links.valid() && create.valid() &&
              H5Pset_create_intermediate_group(links.get(), 1) >= 0 &&
              H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()) >= 0 &&
              H5Pset_fletcher32(create.get()) >= 0 &&
              // Chunks take space when first written, at their checksummed size, and are
              // never filled beforehand: every element is written once.
              H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_INCR) >= 0 &&
              H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER) >= 0,
          path_, "preparing dataset '" + name + "'");
  const Handle dataset(guarded("creating dataset '" + name + "'",
                               [&] {
                                 return H5Dcreate2(file_, name.c_str(), type_of(element),
                                                   space.get(), links.get(), create.get(),
                                                   H5P_DEFAULT);
                               }),
                       H5Dclose);
  require(dataset.valid(), path_, "creating dataset '" + name + "' (is the disk full?)");
  require(guarded("naming the dtype of '" + name + "'",
                  [&] { return write_text_attribute(dataset.get(), "dtype", dtype_name); }),
          path_, "naming the dtype of '" + name + "'");
}

hid_t Hdf5File::open_dataset(const std::string& name) const {
  const hid_t dataset = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
  LLMFT_REQUIRE(dataset >= 0, "the checkpoint " << path_ << " has no dataset '" << name
                                                << "': it was written for another model or "
                                                   "optimizer, or is damaged");
  return dataset;
}

bool Hdf5File::has_dataset(const std::string& name) const {
  // H5Lexists needs every group on the way to exist.
  for (size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1)) {
    if (H5Lexists(file_, name.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0;
}

Shape Hdf5File::dataset_shape(const std::string& name) const {
  const Handle dataset(open_dataset(name), H5Dclose);
  const Handle space(H5Dget_space(dataset.get()), H5Sclose);
  hsize_t dims[H5S_MAX_RANK];
  const int rank = H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  require(rank >= 0, path_, "reading the shape of '" + name + "'");
  return Shape(dims, dims + rank);
}

std::string Hdf5File::dataset_dtype(const std::string& name) const {
  const Handle dataset(open_dataset(name), H5Dclose);
  std::string value;
  require(read_text_attribute(dataset.get(), "dtype", value), path_,
          "reading the dtype of '" + name + "'");
  return value;
}

uint64_t Hdf5File::stored_digest(hid_t dataset, const std::string& name) const {
  std::string text;
  uint64_t digest = 0;
  LLMFT_REQUIRE(
      read_text_attribute(dataset, kDigestAttribute, text) && parse_digest_text(text, digest),
      "the checkpoint " << path_ << " has no readable digest for dataset '" << name
                        << "': the file is damaged; resume from another checkpoint");
  return digest;
}

void Hdf5File::write(const std::string& name, H5Element element,
                     const std::vector<FlatRange>& ranges, const void* values) {
  const Handle dataset(open_dataset(name), H5Dclose);
  const Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  const Shape shape = dataset_shape(name);
  const std::vector<Block> blocks = flat_blocks(ranges, shape);
  // Collective: every rank makes as many calls as the rank with the most blocks, and makes
  // them all even after one failed, so that no rank waits in a call the others skipped.
  int calls = static_cast<int>(blocks.size());
  LLMFT_REQUIRE(guarded("counting the writes of '" + name + "'",
                        [&] {
                          return MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_INT, MPI_MAX,
                                               agreement_.comm());
                        }) == MPI_SUCCESS,
                "MPI_Allreduce failed while writing '" << name << "' to " << path_);
  const char* next = static_cast<const char*>(values);
  const size_t width = width_of(element);
  std::string failure;
  for (int i = 0; i < calls; ++i) {
    const bool mine = i < static_cast<int>(blocks.size());
    const Block none{0, 0, 1, 1};
    const Handle memory_space(block_space(mine ? blocks[i] : none, shape.size()), H5Sclose);
    if (mine) {
      if (!select_block(file_space.get(), blocks[i], shape.size()) && failure.empty()) {
        failure = "HDF5: selecting part of '" + name + "' in " + path_ + " failed";
      }
    } else {
      H5Sselect_none(file_space.get());
      H5Sselect_none(memory_space.get());
    }
    const herr_t written = guarded("writing dataset '" + name + "'", [&] {
      return H5Dwrite(dataset.get(), type_of(element), memory_space.get(), file_space.get(),
                      collective_, next);
    });
    if (written < 0 && failure.empty()) {
      failure = "HDF5: writing dataset '" + name + "' in " + path_ + " failed (is the disk full?)";
    }
    if (mine) next += static_cast<size_t>(blocks[i].elements()) * width;
  }
  agree(failure);
  const uint64_t digest =
      seal_digest(agreement_.sum(digest_terms(ranges, values, width)), dataset_dtype(name), shape);
  agree(failure_of([&] {
    const bool stored = guarded("writing the digest of '" + name + "'", [&] {
      return write_text_attribute(dataset.get(), kDigestAttribute, digest_text(digest));
    });
    require(stored, path_, "writing the digest of '" + name + "' (is the disk full?)");
  }));
}

void Hdf5File::read(const std::string& name, H5Element element,
                    const std::vector<FlatRange>& ranges, void* values,
                    const std::vector<FlatRange>& verify) {
  const Handle dataset(open_dataset(name), H5Dclose);
  const Handle stored_type(H5Dget_type(dataset.get()), H5Tclose);
  LLMFT_REQUIRE(stored_type.valid() && H5Tequal(stored_type.get(), type_of(element)) > 0,
                "the checkpoint " << path_ << " stores dataset '" << name
                                  << "' as another number type than llmft writes: the file is "
                                     "damaged; resume from another checkpoint");
  const Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  const Shape shape = dataset_shape(name);
  const size_t width = width_of(element);
  // Independent reads: each rank reads its own blocks, as many as it has.
  const std::string failure = failure_of([&] {
    char* next = static_cast<char*>(values);
    for (const Block& block : flat_blocks(ranges, shape)) {
      const Handle memory_space(block_space(block, shape.size()), H5Sclose);
      require(select_block(file_space.get(), block, shape.size()), path_,
              "selecting part of '" + name + "'");
      const herr_t read = guarded("reading dataset '" + name + "'", [&] {
        return H5Dread(dataset.get(), type_of(element), memory_space.get(), file_space.get(),
                       H5P_DEFAULT, next);
      });
      LLMFT_REQUIRE(read >= 0, "the checkpoint "
                                   << path_ << " could not be read at dataset '" << name
                                   << "': its checksum does not match (the file is damaged) or "
                                      "it is truncated");
      next += static_cast<size_t>(block.elements()) * width;
    }
  });
  agree(failure);
  const uint64_t digest =
      seal_digest(agreement_.sum(digest_terms_of_subset(ranges, verify, values, width)),
                  dataset_dtype(name), shape);
  LLMFT_REQUIRE(digest == stored_digest(dataset.get(), name),
                "the checkpoint " << path_ << " holds values of dataset '" << name
                                  << "' that differ from those written (their digest does not "
                                     "match): the file is damaged; resume from another "
                                     "checkpoint");
}

void Hdf5File::set_attribute(const std::string& name, const std::string& value) {
  agree(failure_of([&] {
    const bool written = guarded("writing attribute '" + name + "'",
                                 [&] { return write_text_attribute(file_, name, value); });
    require(written, path_, "writing attribute '" + name + "' (is the disk full?)");
  }));
}

bool Hdf5File::has_attribute(const std::string& name) const {
  return H5Aexists(file_, name.c_str()) > 0;
}

std::string Hdf5File::attribute(const std::string& name) const {
  LLMFT_REQUIRE(has_attribute(name), "the checkpoint " << path_ << " lacks its '" << name
                                                       << "' attribute: it is not an llmft "
                                                          "checkpoint, or is damaged");
  std::string value;
  LLMFT_REQUIRE(read_text_attribute(file_, name, value),
                "the checkpoint " << path_ << " has an unreadable '" << name
                                  << "' attribute: the file is damaged");
  return value;
}

}  // namespace llmft::io
