#include "lib/pcap_file.hh"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace fulcrum {
namespace {

constexpr uint32_t kMagicMicroseconds = 0xa1b2c3d4;  // pcap, microsecond timestamps

}  // namespace

Result<std::shared_ptr<PcapFile>> PcapFile::create(const std::string& path, uint32_t snaplen,
                                                   std::string owner) {
  constexpr mode_t kMode = 0644;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kMode);
  if (fd < 0) return make_error("cannot write capture " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 ||
      !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(fd);
    return make_error("cannot write capture " + path +
                      ": not a regular file, FIFO or character device");
  }
  std::shared_ptr<PcapFile> file(new PcapFile(fd, path, std::move(owner)));
  pcap_file_header h{};
  h.magic = kMagicMicroseconds;
  h.version_major = PCAP_VERSION_MAJOR;
  h.version_minor = PCAP_VERSION_MINOR;
  h.snaplen = snaplen;
  h.linktype = DLT_EN10MB;
  if (int err = file->write_all(reinterpret_cast<const char*>(&h), sizeof h); err != 0)
    return make_error("cannot write capture " + path + ": " + std::strerror(err));
  return file;
}

PcapFile::~PcapFile() {
  ::close(fd_);
}

int PcapFile::write_all(const char* data, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd_, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = w < 0 ? errno : ENOSPC;
      // Best effort: a FIFO or a device cannot be cut back.
      if (done > 0 && ::ftruncate(fd_, end_) == 0) ::lseek(fd_, end_, SEEK_SET);
      return err;
    }
    done += static_cast<size_t>(w);
  }
  end_ += static_cast<off_t>(n);
  return 0;
}

bool PcapFile::append(PcapBuffer& b) {
  if (b.empty()) return true;
  std::lock_guard<std::mutex> lock(mu_);
  const int err = write_all(b.bytes().data(), b.bytes().size());
  if (err != 0) {
    lost_ += b.packets();
    if (first_error_.empty()) {
      first_error_ = std::strerror(err);
      std::fprintf(stderr, "fulcrum: capture %s: write failed: %s; packets are being lost\n",
                   path_.c_str(), first_error_.c_str());
    }
  }
  b.clear();
  return err == 0;
}

uint64_t PcapFile::lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

std::string PcapFile::first_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

}  // namespace fulcrum
