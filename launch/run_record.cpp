#include "launch/run_record.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/progress.h"
#include "io/value_digest.h"
#include "launch/build_report.h"
#include "launch/run_settings.h"

namespace llmft {
namespace {

constexpr size_t kHashBlockBytes = 1 << 20;

io::Json text_lines(const std::string& text) {
  io::Json lines = io::Json::array({});
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(io::Json::string(line));
  return lines;
}

// {"path", "bytes", "fnv1a64"}: the file's size and the FNV-1a of all its bytes.
io::Json data_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(
      in, "cannot read data file " << path << " for the run record: " << std::strerror(errno));
  std::error_code size_error;
  const uintmax_t size = std::filesystem::file_size(path, size_error);
  io::Progress progress("run record: fingerprinting " + path, size_error ? 0 : size,
                        io::ProgressCount::bytes());
  std::string block(kHashBlockBytes, '\0');
  uint64_t hash = io::kFnvOffset, bytes = 0;
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    const auto got = static_cast<size_t>(in.gcount());
    hash = io::fnv1a_bytes(hash, block.data(), got);
    bytes += got;
    progress.update(bytes);
  }
  progress.finish();
  return io::Json::object({{"path", io::Json::string(path)},
                           {"bytes", io::Json::number(static_cast<double>(bytes))},
                           {"fnv1a64", io::Json::string(io::digest_text(hash))}});
}

io::Json plan(const TrainOptions& o, const MeshShape& shape) {
  return io::Json::object(
      {{"auto_plan", io::Json::boolean(o.auto_plan)},
       {"dp", io::Json::number(shape.dp)},
       {"tp", io::Json::number(shape.tp)},
       {"zero", io::Json::number(o.zero)},
       {"micro_batch", io::Json::number(o.micro_batch)},
       {"grad_accum", io::Json::number(o.grad_accum)},
       {"global_batch", io::Json::number(o.micro_batch * o.grad_accum * shape.dp)},
       {"checkpointed_blocks", io::Json::number(o.checkpointed_blocks)},
       {"sequence_parallel", io::Json::boolean(o.sequence)},
       {"offload_optimizer", io::Json::boolean(o.offload)},
       {"steps", io::Json::number(o.steps)}});
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The record inside `text`, checked to be one.
io::Json parse_record(const std::string& text) {
  const io::Json file = io::Json::parse(text);
  const io::Json* record = file.find("run_record");
  LLMFT_REQUIRE(record != nullptr && record->is_object(),
                "not a run record (an object {\"run_record\": {...}}); give the run_record.json "
                "llmft train wrote");
  record->at("options").as_object();
  record->at("given").as_array();
  return *record;
}

}  // namespace

io::Json run_record(const po::variables_map& values, const TrainOptions& o, const MeshShape& shape,
                    const std::vector<std::string>& hosts) {
  io::Json options = io::Json::object({});
  io::Json given = io::Json::array({});
  for (const Setting& setting : option_settings(values)) {
    const std::string name = setting.name.substr(2);
    // --config's values are among the options; --quiet and --progress-every only change
    // what the terminal shows.
    if (name == "config" || name == "quiet" || name == "progress-every") continue;
    options.set(name, io::Json::string(setting.value));
    if (!values[name].defaulted()) given.push_back(io::Json::string(name));
  }
  io::Json data = io::Json::array({data_file(o.data)});
  if (!o.val_data.empty()) data.push_back(data_file(o.val_data));
  io::Json host_names = io::Json::array({});
  for (const std::string& host : hosts) host_names.push_back(io::Json::string(host));
  return io::Json::object({{"started", io::Json::string(utc_now())},
                           {"build", text_lines(build_report())},
                           {"options", std::move(options)},
                           {"given", std::move(given)},
                           {"data", std::move(data)},
                           {"plan", plan(o, shape)},
                           {"world_size", io::Json::number(static_cast<double>(hosts.size()))},
                           {"hosts", std::move(host_names)}});
}

std::string run_record_text(const io::Json& record) {
  return io::Json::object({{"run_record", record}}).dump() + "\n";
}

void write_run_record(const std::string& dir, const io::Json& record) {
  io::write_file_atomically((std::filesystem::path(dir) / kRunRecordFile).string(),
                            run_record_text(record));
}

io::Json read_run_record(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kRunRecordFile).string();
  std::ifstream in(path);
  if (!in) return io::Json();
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_record(text.str());
  } catch (const Error& e) {
    LLMFT_FAIL(path << ": " << e.what());
  }
}

bool is_run_record_text(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

std::string run_record_config(const std::string& text) {
  const io::Json record = parse_record(text);
  const io::Json& options = record.at("options");
  std::string ini;
  for (const io::Json& name : record.at("given").as_array()) {
    ini += name.as_string() + " = " + options.at(name.as_string()).as_string() + "\n";
  }
  return ini;
}

std::string run_record_source(const io::Json& record) {
  const io::Json& data = record.at("data").as_array().at(0);
  return "trained by " + record.at("build").as_array().at(0).as_string() + " on --data " +
         data.at("path").as_string() + " (" + std::to_string(data.at("bytes").as_int()) +
         " bytes, fnv1a64 " + data.at("fnv1a64").as_string() + ") for " +
         std::to_string(record.at("plan").at("steps").as_int()) + " steps, started " +
         record.at("started").as_string();
}

}  // namespace llmft
