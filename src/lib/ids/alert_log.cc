#include "lib/ids/alert_log.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace fulcrum::ids {
namespace {

constexpr uint32_t kByte = 0xFF;
constexpr int kShift3 = 24, kShift2 = 16, kShift1 = 8;
constexpr unsigned char kFirstPrintable = 0x20;

void append_ip(std::string& out, uint32_t a) {
  char buf[sizeof "255.255.255.255"];
  const int n = std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a >> kShift3, (a >> kShift2) & kByte,
                              (a >> kShift1) & kByte, a & kByte);
  out.append(buf, static_cast<size_t>(n));
}

// The packet's source or destination address: dotted quad, or IPv6 as inet_ntop writes it
// (RFC 5952's form, as Suricata's EVE records have it).
void append_addr(std::string& out, const PacketView& v, bool source) {
  if (!v.ipv6()) {
    append_ip(out, source ? v.src : v.dst);
    return;
  }
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, v.ip6 + (source ? kIpv6SrcOff : kIpv6DstOff), buf, sizeof buf) != nullptr)
    out += buf;
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < kFirstPrintable) {
      char buf[sizeof "\\u0000"];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

}  // namespace

Result<std::unique_ptr<AlertLog>> AlertLog::open(const std::string& path, AlertFormat format) {
  constexpr mode_t kMode = 0644;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kMode);
  if (fd < 0) return make_error("cannot open alert log " + path + ": " + std::strerror(errno));
  struct statfs fs {};
  struct stat st {};
  const bool pseudo =
      ::fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC);
  const bool kind_ok =
      ::fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
  if (pseudo || !kind_ok) {
    ::close(fd);
    return make_error("alert log " + path +
                      (pseudo ? " is in a kernel pseudo file system"
                              : " is not a regular file, FIFO or character device"));
  }
  std::unique_ptr<AlertLog> log(new AlertLog(fd, path, format));
  log->buf_.reserve(kFlushBytes + kFlushBytes / 4);
  return log;
}

AlertLog::~AlertLog() {
  flush();
  ::close(fd_);
}

void AlertLog::append(uint32_t sid, std::string_view msg, uint64_t packet, const PacketView& v) {
  buf_ += "{\"sid\":";
  buf_ += std::to_string(sid);
  buf_ += ",\"msg\":";
  append_json_string(buf_, msg);
  buf_ += ",\"packet\":";
  buf_ += std::to_string(packet);
  buf_ += ",\"flow\":{\"src\":\"";
  append_addr(buf_, v, true);
  buf_ += "\",\"dst\":\"";
  append_addr(buf_, v, false);
  buf_ += "\",\"sport\":";
  buf_ += std::to_string(v.sport);
  buf_ += ",\"dport\":";
  buf_ += std::to_string(v.dport);
  buf_ += ",\"proto\":";
  buf_ += std::to_string(v.proto);
  buf_ += "}}\n";
}

void AlertLog::append_eve(const Rule& rule, uint64_t packet, const PacketView& v) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  // The date and time to the second change once a second: formatted then, not per alert.
  if (now.tv_sec != stamp_second_) {
    tm utc{};
    ::gmtime_r(&now.tv_sec, &utc);
    char date[sizeof "2026-11-24T10:00:00"];
    stamp_ = std::string(date, std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc));
    stamp_second_ = now.tv_sec;
  }
  char fraction[32];  // ".123456+0000"
  std::snprintf(fraction, sizeof fraction, ".%06ld+0000", now.tv_nsec / 1000);
  buf_ += "{\"timestamp\":\"";
  buf_ += stamp_;
  buf_ += fraction;
  buf_ += "\",\"event_type\":\"alert\",\"src_ip\":\"";
  append_addr(buf_, v, true);
  buf_ += "\",";
  const bool ports = (v.proto == kIpProtoTcp || v.proto == kIpProtoUdp) && !v.fragment;
  if (ports) buf_ += "\"src_port\":" + std::to_string(v.sport) + ",";
  buf_ += "\"dest_ip\":\"";
  append_addr(buf_, v, false);
  buf_ += "\",";
  if (ports) buf_ += "\"dest_port\":" + std::to_string(v.dport) + ",";
  buf_ += "\"proto\":\"";
  buf_ += v.proto == kIpProtoTcp      ? "TCP"
          : v.proto == kIpProtoUdp    ? "UDP"
          : v.proto == kIpProtoIcmp   ? "ICMP"
          : v.proto == kIpProtoIcmpv6 ? "IPv6-ICMP"
                                      : std::to_string(v.proto);
  buf_ += "\",\"pkt_index\":" + std::to_string(packet);
  buf_ += ",\"alert\":{\"action\":\"allowed\",\"gid\":1,\"signature_id\":";
  buf_ += std::to_string(rule.sid);
  buf_ += ",\"rev\":" + std::to_string(rule.rev) + ",\"signature\":";
  append_json_string(buf_, rule.msg);
  buf_ += ",\"category\":\"\",\"severity\":3}}\n";
}

bool AlertLog::flush() {
  size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ++errors_;
      // Every alert whose line did not reach the file completely is lost.
      const auto unwritten = std::string_view(buf_).substr(done);
      lost_ += static_cast<uint64_t>(std::count(unwritten.begin(), unwritten.end(), '\n'));
      if (first_error_.empty()) {
        first_error_ = std::strerror(err);
        std::fprintf(stderr, "fulcrum: alert log %s: write failed: %s; alerts are being lost\n",
                     path_.c_str(), first_error_.c_str());
      }
      buf_.clear();
      return false;
    }
    done += static_cast<size_t>(n);
  }
  buf_.clear();
  return true;
}

}  // namespace fulcrum::ids
