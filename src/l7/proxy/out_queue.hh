// OutQueue: bytes waiting for a socket, as the pieces they were made in (a serialised head, a
// message body moved out of its Message), sent with one sendmsg over several pieces. A body is
// never copied into a contiguous buffer: it goes from the parser's vector to the kernel.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace fulcrum::l7 {

class OutQueue {
 public:
  // Small pieces are copied onto the last string piece; others are moved in.
  void append(std::string s) {
    if (s.empty()) return;
    bytes_ += s.size();
    if (!pieces_.empty() && !pieces_.back().is_vec && s.size() <= kCoalesceBytes) {
      pieces_.back().s.append(s);
      return;
    }
    pieces_.push_back(Piece{std::move(s), {}, false, 0});
  }
  void append(std::vector<uint8_t> v) {
    if (v.empty()) return;
    bytes_ += v.size();
    pieces_.push_back(Piece{{}, std::move(v), true, 0});
  }
  size_t size() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  void clear() {
    pieces_.clear();
    bytes_ = 0;
  }

  // Sends what the socket takes. Returns the bytes sent (0: it would block), or -1 on a socket
  // error (errno set).
  ssize_t send_to(int fd) {
    size_t total = 0;
    while (!pieces_.empty()) {
      iovec iov[kMaxIov];
      size_t n = 0;
      for (auto it = pieces_.begin(); it != pieces_.end() && n < kMaxIov; ++it, ++n) {
        iov[n].iov_base = const_cast<char*>(it->data()) + it->off;
        iov[n].iov_len = it->len() - it->off;
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = n;
      const ssize_t sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        return -1;
      }
      consume(static_cast<size_t>(sent));
      total += static_cast<size_t>(sent);
    }
    return static_cast<ssize_t>(total);
  }

 private:
  static constexpr size_t kMaxIov = 64;
  static constexpr size_t kCoalesceBytes = 4096;

  struct Piece {
    std::string s;
    std::vector<uint8_t> v;
    bool is_vec;
    size_t off;
    const char* data() const { return is_vec ? reinterpret_cast<const char*>(v.data()) : s.data(); }
    size_t len() const { return is_vec ? v.size() : s.size(); }
  };

  void consume(size_t n) {
    bytes_ -= n;
    while (n > 0) {
      Piece& p = pieces_.front();
      const size_t left = p.len() - p.off;
      if (n < left) {
        p.off += n;
        return;
      }
      n -= left;
      pieces_.pop_front();
    }
  }

  std::deque<Piece> pieces_;
  size_t bytes_ = 0;
};

}  // namespace fulcrum::l7
