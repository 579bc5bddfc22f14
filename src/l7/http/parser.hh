// HTTP/1.x message parsing for the L7 proxy, on libhttp-parser (nodejs/http-parser, Debian's
// libhttp-parser). Incremental: bytes may arrive in pieces of any size; each complete request
// or response comes out as an l7::Message (head parsed, body de-chunked) with the facts the
// proxy needs to put it back on the wire (serialize.hh): keep-alive, whether the message has no
// body by definition (responses to HEAD, 1xx, 204, 304).
//
//   Parser p(Direction::kRequest);
//   std::vector<Parsed> out;
//   if (!p.feed(bytes, out)) answer(error_status(p.error()));   // 400 / 413 / 431 / 501
//   ... p.finish(out) at end of stream (a response ended by close completes here).
//
// Limits (Limits): header bytes (request line or status line + header names and values), number
// of headers, body bytes. A response parser learns, in order, which requests were HEAD
// (request_sent) so that their responses are read without a body. Interim 1xx responses come out
// with `informational` set; the answer to the same request follows.
#pragma once

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "l7/flow/message.hh"

namespace fulcrum::l7::http {

struct Limits {
  size_t max_header_bytes = 64 * 1024;
  size_t max_headers = 100;
  size_t max_body_bytes = size_t{64} << 20;
};

// Why a stream stopped parsing. Each has a name for counters and the status the proxy answers.
enum class ParseError : uint8_t {
  kNone,
  kMalformed,       // libhttp-parser refused the bytes (400)
  kHeaderTooLarge,  // head over Limits::max_header_bytes (431)
  kTooManyHeaders,  // over Limits::max_headers (431)
  kBodyTooLarge,    // body over Limits::max_body_bytes (413)
  kUnsupported,     // CONNECT or Upgrade (501)
  kTruncated,       // the stream ended inside a message (400)
};

const char* error_name(ParseError e);
int error_status(ParseError e);

struct Parsed {
  Message msg;                   // head and de-chunked body; flow/seq/arrival left to the caller
  bool keep_alive = true;        // http_should_keep_alive after this message
  bool bodyless = false;         // response without a body by definition: its head is kept as sent
  bool framed = false;           // the head had Content-Length or Transfer-Encoding
  bool informational = false;    // a 1xx interim response
  bool expect_continue = false;  // request with "Expect: 100-continue"
};

class Parser {
 public:
  explicit Parser(Direction dir, Limits limits = {});
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Parses `data`; every message completed by it is appended to `out`. False on an error
  // (error() says which); the parser accepts nothing after one.
  bool feed(std::string_view data, std::vector<Parsed>& out);
  // End of stream: completes a response whose end is the close. False (kTruncated) when the
  // stream ended inside a message.
  bool finish(std::vector<Parsed>& out);

  // Response parsers: the next request sent on the connection was (not) a HEAD.
  void request_sent(bool head) { head_requests_.push_back(head); }

  ParseError error() const { return error_; }
  // libhttp-parser's description for kMalformed; the limit for the others.
  const std::string& error_detail() const { return detail_; }
  // True between the first byte of a message and its end.
  bool in_message() const { return in_message_; }
  // True once a message's head is complete and before its end (the body is being read).
  bool in_body() const { return headers_done_ && in_message_; }
  // True when the message being read asked "Expect: 100-continue" and its body has not come.
  bool wants_continue() const { return in_body() && cur_.expect_continue && cur_.msg.body.empty(); }
  // Head bytes received so far of the message being read (0 when none).
  size_t head_bytes() const { return in_message_ && !headers_done_ ? header_bytes_ : 0; }

 private:
  static int on_message_begin(http_parser* p);
  static int on_url(http_parser* p, const char* at, size_t len);
  static int on_status(http_parser* p, const char* at, size_t len);
  static int on_header_field(http_parser* p, const char* at, size_t len);
  static int on_header_value(http_parser* p, const char* at, size_t len);
  static int on_headers_complete(http_parser* p);
  static int on_body(http_parser* p, const char* at, size_t len);
  static int on_message_complete(http_parser* p);

  bool count_head(size_t len);
  void fail(ParseError e, std::string detail);

  http_parser parser_;
  http_parser_settings settings_;
  Direction dir_;
  Limits limits_;
  Parsed cur_;
  std::vector<Parsed>* out_ = nullptr;
  std::deque<bool> head_requests_;
  size_t header_bytes_ = 0;
  bool last_was_value_ = false;
  bool headers_done_ = false;
  bool in_message_ = false;
  ParseError error_ = ParseError::kNone;
  std::string detail_;
};

}  // namespace fulcrum::l7::http
