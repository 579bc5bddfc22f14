// AlertLog: IDS alerts as JSON lines, one per (packet, rule), through a per-worker buffer that
// is written out when it fills and when the log is closed (no system call per alert):
//
//   {"sid":1000001,"msg":"GET request","packet":17,"flow":{"src":"10.0.0.1","dst":"10.0.0.2",
//    "sport":1234,"dport":80,"proto":6}}
//
// `packet` is the index of the packet among those the writing element saw on its worker,
// starting at 0; `proto` is the IP protocol number; ports are 0 for protocols without them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.hh"
#include "lib/ids/packet_view.hh"

namespace fulcrum::ids {

class AlertLog {
 public:
  static constexpr size_t kFlushBytes = size_t{64} << 10;

  // Creates (truncates) the file at `path`: a regular file, a FIFO or a character device
  // (/dev/null), not a file of a kernel pseudo file system (/proc, /sys).
  static Result<std::unique_ptr<AlertLog>> open(const std::string& path);
  ~AlertLog();
  AlertLog(const AlertLog&) = delete;
  AlertLog& operator=(const AlertLog&) = delete;

  void write(uint32_t sid, std::string_view msg, uint64_t packet, const PacketView& v) {
    append(sid, msg, packet, v);
    if (buf_.size() >= kFlushBytes) [[unlikely]]
      flush();
  }
  // Writes the buffer out; false when the write fails: counted in errors(), the alerts not
  // written completely in lost(), the first failure reported once on stderr.
  bool flush();
  uint64_t errors() const { return errors_; }
  uint64_t lost() const { return lost_; }
  const std::string& first_error() const { return first_error_; }
  const std::string& path() const { return path_; }

 private:
  AlertLog(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void append(uint32_t sid, std::string_view msg, uint64_t packet, const PacketView& v);

  int fd_;
  std::string path_;
  std::string buf_;
  uint64_t errors_ = 0;
  uint64_t lost_ = 0;
  std::string first_error_;
};

}  // namespace fulcrum::ids
