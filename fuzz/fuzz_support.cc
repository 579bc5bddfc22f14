#include "fuzz_support.hh"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "io/eal.hh"
#include "io/mempool.hh"

namespace fulcrum::fuzz {
namespace {

constexpr unsigned kFuzzPoolSize = 8191;

std::map<std::string, std::string, std::less<>>& scratch_files() {
  static std::map<std::string, std::string, std::less<>> files;
  return files;
}

void remove_scratch_files() {
  for (const auto& [stem, path] : scratch_files()) std::remove(path.c_str());
}

}  // namespace

void check_failed(const char* cond, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n  %s\n", file, line, cond, what.c_str());
  std::abort();
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  size_t pos = 0;
  for (;;) {
    const size_t end = text.find(sep, pos);
    parts.emplace_back(text.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return parts;
}

const std::string& scratch_path(std::string_view stem) {
  auto it = scratch_files().find(stem);
  if (it != scratch_files().end()) return it->second;
  if (scratch_files().empty()) std::atexit(remove_scratch_files);
  // TMPDIR, else memory-backed /dev/shm (one write per input), else /tmp.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  if (tmp == nullptr && access("/dev/shm", W_OK) == 0) dir = "/dev/shm";
  std::string path = dir + "/fulcrum-fuzz-" + std::to_string(getpid()) + "-" + std::string(stem);
  return scratch_files().emplace(std::string(stem), std::move(path)).first->second;
}

void write_scratch(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  FUZZ_CHECK(out.good(), "cannot write the scratch file " + path);
}

void init_dpdk() {
  init_eal_for_tests();
}

rte_mempool* packet_pool() {
  static rte_mempool* pool = [] {
    init_dpdk();
    Result<rte_mempool*> r = create_packet_pool("fuzz_pool", kFuzzPoolSize);
    FUZZ_CHECK(r.ok(), r.ok() ? "" : r.error());
    return r.value();
  }();
  return pool;
}

const char* source_dir() {
  return FULCRUM_SOURCE_DIR;
}

}  // namespace fulcrum::fuzz
