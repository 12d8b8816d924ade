#include "launch/calibration_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json.h"
#include "io/output_directory.h"

namespace llmft {

namespace {

using io::Json;

constexpr int kVersion = 6;

CollectiveRate parse_rate(const Json& json) {
  return CollectiveRate{json.at("bandwidth").as_number(), json.at("latency_s").as_number()};
}

Link parse_link(const Json* json) {
  if (!json) return Link{};
  return Link{parse_rate(json->at("all_reduce")), parse_rate(json->at("reduce_scatter")),
              parse_rate(json->at("all_gather"))};
}

Json rate_json(const CollectiveRate& rate) {
  return Json::object(
      {{"bandwidth", Json::number(rate.bandwidth)}, {"latency_s", Json::number(rate.latency_s)}});
}

Json entry_json(const Calibration& c) {
  return Json::object({
      {"device", Json::string(c.device)},
      {"gemm_flops", Json::number(c.gemm_flops)},
      {"gemm_half_rate_rows", Json::number(c.gemm_half_rate_rows)},
      {"intra_node", link_json(c.intra_node)},
      {"inter_node", link_json(c.inter_node)},
      {"memory_bandwidth", Json::number(c.memory_bandwidth)},
      {"kernel_call_s", Json::number(c.kernel_call_s)},
      {"gemm_size", Json::number(c.gemm_size)},
      {"measured_at", Json::string(c.measured_at)},
      {"load_average", Json::number(c.load_average)},
      {"online_cpus", Json::number(c.online_cpus)},
  });
}

Calibration parse_entry(const Json& json) {
  Calibration c;
  c.device = json.at("device").as_string();
  c.gemm_flops = json.at("gemm_flops").as_number();
  c.gemm_half_rate_rows = json.at("gemm_half_rate_rows").as_number();
  c.intra_node = parse_link(json.find("intra_node"));
  c.inter_node = parse_link(json.find("inter_node"));
  c.memory_bandwidth = json.at("memory_bandwidth").as_number();
  c.kernel_call_s = json.at("kernel_call_s").as_number();
  c.gemm_size = json.at("gemm_size").as_number();
  c.measured_at = json.at("measured_at").as_string();
  c.load_average = json.at("load_average").as_number();
  c.online_cpus = json.at("online_cpus").as_int();
  LLMFT_REQUIRE(c.gemm_flops > 0 && c.gemm_size >= 1,
                "gemm_flops and gemm_size must be positive (the probe times that GEMM)");
  return c;
}

Json empty_cache() {
  return Json::object({{"version", Json::number(kVersion)}, {"entries", Json::object({})}});
}

// The cache's contents, or an empty cache when the file does not exist or was written by
// another version (whose measurements are then taken again).
Json read_cache(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return empty_cache();
  std::stringstream text;
  text << in.rdbuf();
  try {
    Json cache = Json::parse(text.str());
    if (cache.at("version").as_int() != kVersion) return empty_cache();
    cache.at("entries").as_object();  // throws unless the entries are an object
    return cache;
  } catch (const Error& e) {
    LLMFT_FAIL("calibration cache " << path << ": " << e.what()
                                    << "; delete the file to measure again");
  }
}

}  // namespace

Json link_json(const Link& link) {
  return Json::object({{"all_reduce", rate_json(link.all_reduce)},
                       {"reduce_scatter", rate_json(link.reduce_scatter)},
                       {"all_gather", rate_json(link.all_gather)}});
}

std::string calibration_key(const std::string& host, const std::string& device, DType dtype,
                            int world, int threads) {
  return host + "/" + device + "/" + dtype_name(dtype) + "/" + std::to_string(world) + "/" +
         std::to_string(threads);
}

std::string this_host() {
  char name[256] = {};
  LLMFT_REQUIRE(gethostname(name, sizeof(name) - 1) == 0, "cannot read this machine's host name");
  return name;
}

std::string default_calibration_path() {
  namespace fs = std::filesystem;
  if (const char* path = std::getenv("LLMFT_CALIBRATION_CACHE")) return path;
  if (const char* cache = std::getenv("XDG_CACHE_HOME")) {
    return (fs::path(cache) / "llmft" / "calibration.json").string();
  }
  const char* home = std::getenv("HOME");
  return (fs::path(home ? home : ".") / ".cache" / "llmft" / "calibration.json").string();
}

std::optional<Calibration> read_calibration(const std::string& path, const std::string& key) {
  const Json cache = read_cache(path);
  const Json* entry = cache.at("entries").find(key);
  if (!entry) return std::nullopt;
  try {
    return parse_entry(*entry);
  } catch (const Error& e) {
    LLMFT_FAIL("calibration cache " << path << ", entry " << key << ": " << e.what()
                                    << "; delete the file to measure again");
  }
}

void write_calibration(const std::string& path, const std::string& key, const Calibration& c) {
  Json cache = read_cache(path);
  Json entries = cache.at("entries");
  entries.set(key, entry_json(c));
  cache.set("entries", std::move(entries));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) io::ensure_directory(dir.string(), "calibration cache");
  io::write_shared_file_atomically(path, cache.dump() + "\n");
}

void record_conditions(Calibration& c) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &utc);
  c.measured_at = when;
  std::ifstream loadavg("/proc/loadavg");
  if (!(loadavg >> c.load_average)) c.load_average = -1;
  c.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

std::string conditions_text(const Calibration& c) {
  std::ostringstream os;
  os << c.measured_at << ", load ";
  if (c.load_average < 0) {
    os << "unknown";
  } else {
    os << std::fixed << std::setprecision(2) << c.load_average;
  }
  os << " on " << c.online_cpus << " CPUs";
  return os.str();
}

}  // namespace llmft
