// Helpers shared by the libFuzzer targets in fuzz/ (docs/reliability.md, "Fuzzing").
//
// Every target is `LLVMFuzzerTestOneInput` over one input; what the input means is written at the
// top of each target. A target aborts (FUZZ_CHECK) when an invariant of the code under test does
// not hold, so libFuzzer reports it like a crash and saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/packet.hh"

namespace fulcrum::fuzz {

// Aborts with the condition and a message when `cond` is false.
#define FUZZ_CHECK(cond, ...)                                                           \
  do {                                                                                  \
    if (!(cond)) ::fulcrum::fuzz::check_failed(#cond, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

[[noreturn]] void check_failed(const char* cond, const char* file, int line,
                               const std::string& what);

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `text` split at every `sep` (an empty text gives no parts).
std::vector<std::string> split(std::string_view text, char sep);

// A scratch file private to this process (/tmp/fulcrum-fuzz-PID-STEM), removed at exit.
const std::string& scratch_path(std::string_view stem);
// Replaces the scratch file's contents; aborts when it cannot.
void write_scratch(const std::string& path, std::string_view contents);

// The EAL (no hugepages, as the unit tests run) and one packet pool for the whole process.
void init_dpdk();
rte_mempool* packet_pool();

// The repository root (compiled in), for the configurations and tables the pipelines name.
const char* source_dir();

}  // namespace fulcrum::fuzz
