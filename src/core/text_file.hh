// Reading an input file (pipeline, routes, SAs, rules, names) whole, safely: only a regular file
// is read, and only up to a size limit, so a path naming /dev/zero, a FIFO or a directory is an
// error instead of a read that never ends or fills memory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.hh"

namespace fulcrum {

inline constexpr size_t kMaxInputFileBytes = size_t{1} << 30;

// The whole file. Errors read "cannot open WHAT PATH: reason", "cannot read WHAT PATH: reason",
// "WHAT PATH is a directory", "WHAT PATH is not a regular file (a device, FIFO or socket)" and
// "WHAT PATH is larger than 1 GiB".
Result<std::string> read_input_file(const std::string& path, const std::string& what,
                                    size_t max_bytes = kMaxInputFileBytes);

// TEXT quoted for an error message: 'text', with bytes that are not printable ASCII written as
// \xNN (\t, \r, \n as such) and, past `max` bytes, cut with "..." and the full length, so binary
// garbage or a megabyte line is never echoed whole.
std::string quote_excerpt(std::string_view text, size_t max = 80);

// Whether `path` could be created or overwritten as an output file (a statistics file, a
// capture), without creating or changing it: its folder exists and is writable, and the path, if
// it exists, is not a directory and is writable. "cannot write WHAT PATH: reason".
Status check_output_file(const std::string& path, const std::string& what);

}  // namespace fulcrum
