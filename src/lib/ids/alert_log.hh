// AlertLog: IDS alerts as JSON lines, one per (packet, rule), through a per-worker buffer that
// is written out when it fills and when the log is closed (no system call per alert). Two
// formats. Fulcrum's own (AlertFormat::kJsonLines):
//
//   {"sid":1000001,"msg":"GET request","packet":17,"flow":{"src":"10.0.0.1","dst":"10.0.0.2",
//    "sport":1234,"dport":80,"proto":6}}
//
// `packet` is the index of the packet among those the writing element saw on its worker,
// starting at 0; `proto` is the IP protocol number; ports are 0 for protocols without them.
// Suricata's EVE JSON alert records (AlertFormat::kEve), so that tools reading eve.json read
// them; the time is the time of the alert (Suricata's is the packet's capture time):
//
//   {"timestamp":"2026-11-24T10:00:00.123456+0000","event_type":"alert","src_ip":"10.0.0.1",
//    "src_port":1234,"dest_ip":"10.0.0.2","dest_port":80,"proto":"TCP","pkt_index":17,
//    "alert":{"action":"allowed","gid":1,"signature_id":1000001,"rev":1,
//    "signature":"GET request","category":"","severity":3}}
//
// proto is TCP, UDP, ICMP or IPv6-ICMP by name, other protocols by number (as Suricata writes
// them); the ports are left out for protocols without them. In both formats IPv6 addresses are
// written as inet_ntop writes them (RFC 5952: "2001:db8::1").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.hh"
#include "lib/ids/packet_view.hh"
#include "lib/ids/rule.hh"

namespace fulcrum::ids {

enum class AlertFormat : uint8_t { kJsonLines, kEve };

class AlertLog {
 public:
  static constexpr size_t kFlushBytes = size_t{64} << 10;

  // Creates (truncates) the file at `path`: a regular file, a FIFO or a character device
  // (/dev/null), not a file of a kernel pseudo file system (/proc, /sys).
  static Result<std::unique_ptr<AlertLog>> open(const std::string& path,
                                                AlertFormat format = AlertFormat::kJsonLines);
  ~AlertLog();
  AlertLog(const AlertLog&) = delete;
  AlertLog& operator=(const AlertLog&) = delete;

  void write(const Rule& rule, uint64_t packet, const PacketView& v) {
    if (format_ == AlertFormat::kEve)
      append_eve(rule, packet, v);
    else
      append(rule.sid, rule.msg, packet, v);
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
  AlertLog(int fd, std::string path, AlertFormat format)
      : fd_(fd), path_(std::move(path)), format_(format) {}
  void append(uint32_t sid, std::string_view msg, uint64_t packet, const PacketView& v);
  void append_eve(const Rule& rule, uint64_t packet, const PacketView& v);

  int fd_;
  std::string path_;
  AlertFormat format_;
  std::string stamp_;  // kEve: "YYYY-MM-DDTHH:MM:SS" of stamp_second_
  int64_t stamp_second_ = -1;
  std::string buf_;
  uint64_t errors_ = 0;
  uint64_t lost_ = 0;
  std::string first_error_;
};

}  // namespace fulcrum::ids
