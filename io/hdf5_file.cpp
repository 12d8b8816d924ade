#include "io/hdf5_file.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace llmft::io {
namespace {

constexpr hsize_t kChunkElements = 1 << 18;  // 1 MiB of f32 per chunk

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

// Selects flat `ranges` of a dataspace of `dims` (1 or 2 dimensions) as a union of
// rectangular blocks: a range of a matrix is a partial first row, whole rows, and a
// partial last row.
void select_ranges(hid_t space, const std::vector<hsize_t>& dims,
                   const std::vector<FlatRange>& ranges, const std::string& path,
                   const std::string& name) {
  H5Sselect_none(space);
  const hsize_t cols = dims.size() == 2 ? dims[1] : dims[0];
  auto add_block = [&](hsize_t row, hsize_t col, hsize_t rows, hsize_t width) {
    if (rows == 0 || width == 0) return;
    if (dims.size() == 1) {
      const hsize_t start[1] = {col}, count[1] = {width};
      require(H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr) >= 0, path,
              "selecting part of '" + name + "'");
      return;
    }
    const hsize_t start[2] = {row, col}, count[2] = {rows, width};
    require(H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr) >= 0, path,
            "selecting part of '" + name + "'");
  };
  for (const FlatRange& r : ranges) {
    hsize_t begin = static_cast<hsize_t>(r.begin);
    const hsize_t end = static_cast<hsize_t>(r.end);
    if (begin % cols != 0) {  // the partial first row
      const hsize_t stop = std::min(end, (begin / cols + 1) * cols);
      add_block(begin / cols, begin % cols, 1, stop - begin);
      begin = stop;
    }
    const hsize_t full_rows = (end - begin) / cols;
    add_block(begin / cols, 0, full_rows, cols);
    begin += full_rows * cols;
    add_block(begin / cols, 0, 1, end - begin);  // the partial last row
  }
}

hsize_t elements_in(const std::vector<FlatRange>& ranges) {
  hsize_t n = 0;
  for (const FlatRange& r : ranges) n += static_cast<hsize_t>(r.end - r.begin);
  return n;
}

}  // namespace

Hdf5File::Hdf5File(std::string path, hid_t file) : path_(std::move(path)), file_(file) {
  collective_ = H5Pcreate(H5P_DATASET_XFER);
  require(collective_ >= 0 && H5Pset_dxpl_mpio(collective_, H5FD_MPIO_COLLECTIVE) >= 0, path_,
          "setting collective transfers");
}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept
    : path_(std::move(other.path_)),
      file_(std::exchange(other.file_, -1)),
      collective_(std::exchange(other.collective_, -1)) {}

Hdf5File Hdf5File::create(const std::string& path, MPI_Comm comm) {
  quiet_hdf5();
  const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  require(access.valid() && H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL) >= 0, path,
          "setting up MPI-IO");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  LLMFT_REQUIRE(file >= 0, "cannot create the checkpoint file " << path
                                                                << ": check that its directory "
                                                                   "exists and is writable");
  return Hdf5File(path, file);
}

Hdf5File Hdf5File::open(const std::string& path, MPI_Comm comm) {
  quiet_hdf5();
  const Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  require(access.valid() && H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL) >= 0, path,
          "setting up MPI-IO");
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  LLMFT_REQUIRE(file >= 0, "cannot open the checkpoint " << path
                                                         << " as HDF5: it is missing, "
                                                            "unreadable, or not an HDF5 file");
  return Hdf5File(path, file);
}

Hdf5File::~Hdf5File() {
  if (collective_ >= 0) H5Pclose(collective_);
  if (file_ >= 0) H5Fclose(file_);
}

void Hdf5File::close() {
  if (collective_ >= 0) H5Pclose(std::exchange(collective_, -1));
  if (file_ < 0) return;
  require(H5Fflush(file_, H5F_SCOPE_GLOBAL) >= 0, path_, "flushing");
  require(H5Fclose(std::exchange(file_, -1)) >= 0, path_, "closing");
}

void Hdf5File::create_dataset(const std::string& name, H5Element element, const Shape& shape,
                              const std::string& dtype_name) {
  LLMFT_REQUIRE(!shape.empty() && shape.size() <= 2 && shape_numel(shape) > 0,
                "internal: checkpoint dataset '" << name << "' of shape " << shape_string(shape));
  std::vector<hsize_t> dims(shape.begin(), shape.end()), chunk = dims;
  if (dims.size() == 1) {
    chunk[0] = std::min(dims[0], kChunkElements);
  } else {
    chunk[0] = std::max<hsize_t>(1, std::min(dims[0], kChunkElements / dims[1]));
  }
  const Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose);
  const Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  const Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  require(space.valid() && links.valid() && create.valid() &&
              H5Pset_create_intermediate_group(links.get(), 1) >= 0 &&
              H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()) >= 0 &&
              H5Pset_fletcher32(create.get()) >= 0,
          path_, "preparing dataset '" + name + "'");
  const Handle dataset(H5Dcreate2(file_, name.c_str(), type_of(element), space.get(), links.get(),
                                  create.get(), H5P_DEFAULT),
                       H5Dclose);
  require(dataset.valid(), path_, "creating dataset '" + name + "' (is the disk full?)");
  const Handle text(H5Tcopy(H5T_C_S1), H5Tclose);
  require(text.valid() && H5Tset_size(text.get(), dtype_name.size()) >= 0, path_,
          "typing the dtype of '" + name + "'");
  const Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle attribute(
      H5Acreate2(dataset.get(), "dtype", text.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  require(attribute.valid() && H5Awrite(attribute.get(), text.get(), dtype_name.data()) >= 0, path_,
          "naming the dtype of '" + name + "'");
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
  const Handle attribute(H5Aopen(dataset.get(), "dtype", H5P_DEFAULT), H5Aclose);
  require(attribute.valid(), path_, "reading the dtype of '" + name + "'");
  const Handle type(H5Aget_type(attribute.get()), H5Tclose);
  std::string value(H5Tget_size(type.get()), '\0');
  require(H5Aread(attribute.get(), type.get(), value.data()) >= 0, path_,
          "reading the dtype of '" + name + "'");
  return value;
}

void Hdf5File::write(const std::string& name, H5Element element,
                     const std::vector<FlatRange>& ranges, const void* values) {
  const Handle dataset(open_dataset(name), H5Dclose);
  const Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  const Shape shape = dataset_shape(name);
  select_ranges(file_space.get(), std::vector<hsize_t>(shape.begin(), shape.end()), ranges, path_,
                name);
  const hsize_t n = std::max<hsize_t>(elements_in(ranges), 1);
  const Handle memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (elements_in(ranges) == 0) H5Sselect_none(memory_space.get());
  require(H5Dwrite(dataset.get(), type_of(element), memory_space.get(), file_space.get(),
                   collective_, values) >= 0,
          path_, "writing dataset '" + name + "' (is the disk full?)");
}

void Hdf5File::read(const std::string& name, H5Element element,
                    const std::vector<FlatRange>& ranges, void* values) {
  const Handle dataset(open_dataset(name), H5Dclose);
  const Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  const Shape shape = dataset_shape(name);
  select_ranges(file_space.get(), std::vector<hsize_t>(shape.begin(), shape.end()), ranges, path_,
                name);
  const hsize_t n = std::max<hsize_t>(elements_in(ranges), 1);
  const Handle memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (elements_in(ranges) == 0) H5Sselect_none(memory_space.get());
  LLMFT_REQUIRE(H5Dread(dataset.get(), type_of(element), memory_space.get(), file_space.get(),
                        collective_, values) >= 0,
                "the checkpoint " << path_ << " could not be read at dataset '" << name
                                  << "': its checksum does not match (the file is damaged) or "
                                     "it is truncated");
}

void Hdf5File::set_attribute(const std::string& name, const std::string& value) {
  const Handle text(H5Tcopy(H5T_C_S1), H5Tclose);
  require(text.valid() && H5Tset_size(text.get(), std::max<size_t>(value.size(), 1)) >= 0, path_,
          "typing attribute '" + name + "'");
  const Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  if (H5Aexists(file_, name.c_str()) > 0) H5Adelete(file_, name.c_str());
  const Handle attribute(
      H5Acreate2(file_, name.c_str(), text.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const std::string stored = value.empty() ? std::string(1, '\0') : value;
  require(attribute.valid() && H5Awrite(attribute.get(), text.get(), stored.data()) >= 0, path_,
          "writing attribute '" + name + "'");
}

bool Hdf5File::has_attribute(const std::string& name) const {
  return H5Aexists(file_, name.c_str()) > 0;
}

std::string Hdf5File::attribute(const std::string& name) const {
  LLMFT_REQUIRE(has_attribute(name), "the checkpoint " << path_ << " lacks its '" << name
                                                       << "' attribute: it is not an llmft "
                                                          "checkpoint, or is damaged");
  const Handle attribute(H5Aopen(file_, name.c_str(), H5P_DEFAULT), H5Aclose);
  const Handle type(H5Aget_type(attribute.get()), H5Tclose);
  std::string value(H5Tget_size(type.get()), '\0');
  require(H5Aread(attribute.get(), type.get(), value.data()) >= 0, path_,
          "reading attribute '" + name + "'");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

}  // namespace llmft::io
