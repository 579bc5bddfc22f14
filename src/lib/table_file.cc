#include "lib/table_file.hh"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace fulcrum {

Result<std::string> read_table_file(const std::string& path, const std::string& what) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return make_error("cannot open " + what + " " + path + ": " + std::strerror(errno));
  std::string text;
  constexpr size_t kChunk = size_t{1} << 20;
  size_t used = 0;
  for (;;) {
    text.resize(used + kChunk);
    const size_t got = std::fread(text.data() + used, 1, kChunk, f.get());
    used += got;
    if (got < kChunk) break;
  }
  if (std::ferror(f.get()))
    return make_error("cannot read " + what + " " + path + ": " + std::strerror(errno));
  text.resize(used);
  return text;
}

}  // namespace fulcrum
