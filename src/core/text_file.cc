#include "core/text_file.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fulcrum {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string size_text(size_t bytes) {
  constexpr size_t kGiB = size_t{1} << 30, kMiB = size_t{1} << 20, kKiB = size_t{1} << 10;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, const std::string& what,
                                    size_t max_bytes) {
  const std::string name = what + " " + path;
  // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) return make_error("cannot open " + name + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return make_error("cannot read " + name + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return make_error(name + " is a directory");
  if (!S_ISREG(st.st_mode))
    return make_error(name + " is not a regular file (a device, FIFO or socket)");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return make_error(name + " is larger than " + size_text(max_bytes));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t used = 0;
  while (used < text.size()) {
    const ssize_t n = ::read(f.fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while being read: take what is there
    used += static_cast<size_t>(n);
  }
  text.resize(used);
  return text;
}

std::string quote_excerpt(std::string_view text, size_t max) {
  std::string out = "'";
  const std::string_view shown = text.substr(0, max);
  for (char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += "'";
  if (shown.size() < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

Status check_output_file(const std::string& path, const std::string& what) {
  const std::string prefix = "cannot write " + what + " " + path + ": ";
  if (path.empty()) return make_error("cannot write " + what + ": no file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return make_error(prefix + "it is a directory");
    if (::access(path.c_str(), W_OK) != 0) return make_error(prefix + std::strerror(errno));
    return {};
  }
  if (errno != ENOENT) return make_error(prefix + std::strerror(errno));
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (::stat(dir.c_str(), &st) != 0)
    return make_error(prefix + "folder " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return make_error(prefix + dir + " is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return make_error(prefix + "folder " + dir + ": " + std::strerror(errno));
  return {};
}

}  // namespace fulcrum
