#include "l7/http/parser.hh"

#include <strings.h>

#include <climits>
#include <cstring>

namespace fulcrum::l7::http {

namespace {

// Bytes of a header line beyond its name and value (": " and CRLF), counted against the limit.
constexpr size_t kHeaderLineOverhead = 4;

Parser* self(http_parser* p) {
  return static_cast<Parser*>(p->data);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

const char* error_name(ParseError e) {
  switch (e) {
    case ParseError::kNone:
      return "none";
    case ParseError::kMalformed:
      return "parse-error";
    case ParseError::kHeaderTooLarge:
      return "header-too-large";
    case ParseError::kTooManyHeaders:
      return "too-many-headers";
    case ParseError::kBodyTooLarge:
      return "body-too-large";
    case ParseError::kUnsupported:
      return "unsupported";
    case ParseError::kTruncated:
      return "truncated";
  }
  return "unknown";
}

int error_status(ParseError e) {
  switch (e) {
    case ParseError::kHeaderTooLarge:
    case ParseError::kTooManyHeaders:
      return 431;
    case ParseError::kBodyTooLarge:
      return 413;
    case ParseError::kUnsupported:
      return 501;
    default:
      return 400;
  }
}

Parser::Parser(Direction dir, Limits limits) : dir_(dir), limits_(limits) {
  http_parser_init(&parser_, dir == Direction::kRequest ? HTTP_REQUEST : HTTP_RESPONSE);
  parser_.data = this;
  http_parser_settings_init(&settings_);
  settings_.on_message_begin = on_message_begin;
  settings_.on_url = on_url;
  settings_.on_status = on_status;
  settings_.on_header_field = on_header_field;
  settings_.on_header_value = on_header_value;
  settings_.on_headers_complete = on_headers_complete;
  settings_.on_body = on_body;
  settings_.on_message_complete = on_message_complete;
}

void Parser::fail(ParseError e, std::string detail) {
  if (error_ != ParseError::kNone) return;
  error_ = e;
  detail_ = std::move(detail);
}

bool Parser::count_head(size_t len) {
  header_bytes_ += len;
  if (header_bytes_ <= limits_.max_header_bytes) return true;
  fail(ParseError::kHeaderTooLarge,
       "head over " + std::to_string(limits_.max_header_bytes) + " bytes");
  return false;
}

int Parser::on_message_begin(http_parser* p) {
  Parser* s = self(p);
  s->cur_ = Parsed{};
  s->cur_.msg.dir = s->dir_;
  s->header_bytes_ = 0;
  s->last_was_value_ = false;
  s->headers_done_ = false;
  s->in_message_ = true;
  return 0;
}

int Parser::on_url(http_parser* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (!s->count_head(len)) return 1;
  s->cur_.msg.head.target.append(at, len);
  return 0;
}

int Parser::on_status(http_parser* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (!s->count_head(len)) return 1;
  s->cur_.msg.head.reason.append(at, len);
  return 0;
}

int Parser::on_header_field(http_parser* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (s->headers_done_) return 0;  // trailers of a chunked body: not kept
  if (!s->count_head(len)) return 1;
  auto& hs = s->cur_.msg.head.headers;
  if (hs.empty() || s->last_was_value_) {
    if (hs.size() >= s->limits_.max_headers) {
      s->fail(ParseError::kTooManyHeaders,
              "over " + std::to_string(s->limits_.max_headers) + " headers");
      return 1;
    }
    if (!s->count_head(kHeaderLineOverhead)) return 1;
    hs.emplace_back();
  }
  hs.back().first.append(at, len);
  s->last_was_value_ = false;
  return 0;
}

int Parser::on_header_value(http_parser* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (s->headers_done_) return 0;
  if (!s->count_head(len)) return 1;
  s->cur_.msg.head.headers.back().second.append(at, len);
  s->last_was_value_ = true;
  return 0;
}

// Returning 1 tells libhttp-parser that the message has no body (a response to HEAD, 1xx, 204,
// 304).
int Parser::on_headers_complete(http_parser* p) {
  Parser* s = self(p);
  s->headers_done_ = true;
  Parsed& c = s->cur_;
  HttpHead& h = c.msg.head;
  h.version_minor = static_cast<uint8_t>(p->http_minor);
  for (const auto& [k, v] : h.headers) {
    if (iequals(k, "content-length") || iequals(k, "transfer-encoding")) c.framed = true;
    if (iequals(k, "expect") && iequals(v, "100-continue")) c.expect_continue = true;
  }
  if (p->content_length != ULLONG_MAX && p->content_length > s->limits_.max_body_bytes) {
    s->fail(ParseError::kBodyTooLarge,
            "Content-Length over " + std::to_string(s->limits_.max_body_bytes) + " bytes");
    return -1;
  }
  if (p->content_length != ULLONG_MAX && p->content_length > 0 && !(p->flags & F_CHUNKED))
    c.msg.body.reserve(p->content_length);
  if (s->dir_ == Direction::kRequest) {
    h.method = http_method_str(static_cast<http_method>(p->method));
    return 0;
  }
  h.status = static_cast<int>(p->status_code);
  if (h.status / 100 == 1) {
    c.informational = true;
    c.bodyless = true;
    return 1;
  }
  const bool head = !s->head_requests_.empty() && s->head_requests_.front();
  if (!s->head_requests_.empty()) s->head_requests_.pop_front();
  // libhttp-parser would read a body of Content-Length bytes after a 204 or 304.
  c.bodyless = head || h.status == 204 || h.status == 304;
  return c.bodyless ? 1 : 0;
}

int Parser::on_body(http_parser* p, const char* at, size_t len) {
  Parser* s = self(p);
  auto& body = s->cur_.msg.body;
  if (body.size() + len > s->limits_.max_body_bytes) {
    s->fail(ParseError::kBodyTooLarge,
            "body over " + std::to_string(s->limits_.max_body_bytes) + " bytes");
    return 1;
  }
  const size_t old = body.size();
  body.resize(old + len);
  std::memcpy(body.data() + old, at, len);
  return 0;
}

int Parser::on_message_complete(http_parser* p) {
  Parser* s = self(p);
  if (s->error_ != ParseError::kNone) return 1;
  s->cur_.keep_alive = http_should_keep_alive(p) != 0;
  s->in_message_ = false;
  s->headers_done_ = false;
  s->out_->push_back(std::move(s->cur_));
  s->cur_ = Parsed{};
  return 0;
}

bool Parser::feed(std::string_view data, std::vector<Parsed>& out) {
  if (error_ != ParseError::kNone) return false;
  if (data.empty()) return true;
  out_ = &out;
  const size_t n = http_parser_execute(&parser_, &settings_, data.data(), data.size());
  out_ = nullptr;
  if (error_ != ParseError::kNone) return false;
  if (parser_.upgrade) {
    fail(ParseError::kUnsupported, "CONNECT or Upgrade");
    return false;
  }
  if (HTTP_PARSER_ERRNO(&parser_) == HPE_HEADER_OVERFLOW) {
    fail(ParseError::kHeaderTooLarge, "head over libhttp-parser's HTTP_MAX_HEADER_SIZE");
    return false;
  }
  if (n != data.size() || HTTP_PARSER_ERRNO(&parser_) != HPE_OK) {
    fail(ParseError::kMalformed,
         http_errno_description(static_cast<http_errno>(HTTP_PARSER_ERRNO(&parser_))));
    return false;
  }
  return true;
}

bool Parser::finish(std::vector<Parsed>& out) {
  if (error_ != ParseError::kNone) return false;
  out_ = &out;
  http_parser_execute(&parser_, &settings_, nullptr, 0);
  out_ = nullptr;
  if (error_ != ParseError::kNone) return false;
  if (in_message_ || HTTP_PARSER_ERRNO(&parser_) != HPE_OK) {
    fail(ParseError::kTruncated, "stream ended inside a message");
    return false;
  }
  return true;
}

}  // namespace fulcrum::l7::http
