// PcapFile: one capture file that several workers append to, in libpcap's format (the file
// header of pcap/pcap.h, Ethernet link type, microsecond timestamps), so tcpdump, tshark and
// scapy read it.
//
// A worker gathers whole records in a PcapBuffer of its own and hands the buffer to the file
// when it is full (PcapBuffer::kFlushBytes) or when the worker is done: one lock and one
// write() per buffer, never per packet. A write that fails (disk full, file size limit) loses
// that buffer's records: the file is cut back to its last whole record, so it still reads, and
// lost() counts the packets. libpcap's pcap_dump is not used: it writes through stdio one record
// at a time and reports no error per record, so a failure could be neither counted in packets
// nor undone.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include "core/packet.hh"
#include "core/result.hh"

namespace fulcrum {

// The record header of the pcap format (libpcap keeps its own in a private header).
struct PcapRecordHeader {
  uint32_t ts_sec;
  uint32_t ts_usec;
  uint32_t caplen;  // bytes of the packet in the record
  uint32_t len;     // the packet's length
};
static_assert(sizeof(PcapRecordHeader) == 16);

// Whole records gathered by one worker.
class PcapBuffer {
 public:
  static constexpr size_t kFlushBytes = size_t{64} << 10;
  static constexpr uint64_t kNsPerUs = 1000;

  PcapBuffer() { bytes_.reserve(kFlushBytes); }

  // Records the first `snaplen` (> 0) bytes of `m` (all of them when it is shorter), stamped
  // `now`.
  void add(const Packet* m, uint32_t snaplen, const timespec& now) {
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    const uint32_t cap = len < snaplen ? len : snaplen;
    const PcapRecordHeader h{static_cast<uint32_t>(now.tv_sec),
                             static_cast<uint32_t>(static_cast<uint64_t>(now.tv_nsec) / kNsPerUs),
                             cap, len};
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof h + cap);
    std::memcpy(bytes_.data() + at, &h, sizeof h);
    char* dst = bytes_.data() + at + sizeof h;
    const void* src = rte_pktmbuf_read(m, 0, cap, dst);
    if (src != dst) std::memcpy(dst, src, cap);
    ++packets_;
  }
  bool full() const { return bytes_.size() >= kFlushBytes; }
  bool empty() const { return packets_ == 0; }
  uint64_t packets() const { return packets_; }
  const std::string& bytes() const { return bytes_; }
  void clear() {
    bytes_.clear();
    packets_ = 0;
  }

 private:
  std::string bytes_;
  uint64_t packets_ = 0;
};

class PcapFile {
 public:
  static constexpr uint32_t kMaxSnapLen = 262144;  // libpcap's MAXIMUM_SNAPLEN

  // Creates (truncates) `path`, a regular file, a FIFO or a character device, and writes the
  // file header for records of at most `snaplen` bytes. `owner` names the element writing it.
  // Errors read "cannot write capture PATH: reason".
  static Result<std::shared_ptr<PcapFile>> create(const std::string& path, uint32_t snaplen,
                                                  std::string owner);
  ~PcapFile();
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;

  // Writes the records of `b` out and clears it; false when the write failed (the records are
  // lost; the first failure is reported once on stderr).
  bool append(PcapBuffer& b);

  // Of `n` packets, how many may still be recorded so that the file holds at most `limit` in
  // all (shared by the workers; one atomic add per call, none once the limit is reached).
  uint64_t claim(uint64_t n, uint64_t limit) {
    if (claimed_.load(std::memory_order_relaxed) >= limit) return 0;
    const uint64_t before = claimed_.fetch_add(n, std::memory_order_relaxed);
    return before >= limit ? 0 : std::min(n, limit - before);
  }

  const std::string& path() const { return path_; }
  const std::string& owner() const { return owner_; }
  uint64_t lost() const;
  std::string first_error() const;

 private:
  PcapFile(int fd, std::string path, std::string owner)
      : fd_(fd), path_(std::move(path)), owner_(std::move(owner)) {}
  // Writes all of [data, data + n) at the end of the whole records, or cuts the file back there
  // and returns the error number. Called with mu_ held (or before the file is shared).
  int write_all(const char* data, size_t n);

  int fd_;
  std::string path_;
  std::string owner_;
  std::atomic<uint64_t> claimed_{0};
  mutable std::mutex mu_;
  off_t end_ = 0;  // bytes of whole records (and the file header)
  uint64_t lost_ = 0;
  std::string first_error_;
};

}  // namespace fulcrum
