#include "l7/http/serialize.hh"

#include <strings.h>

#include <cstring>

namespace fulcrum::l7::http {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

void serialize(const HttpHead& head, Direction dir, std::span<const uint8_t> body, bool framed,
               bool bodyless, std::string& out) {
  serialize_head(head, dir, body.size(), framed, bodyless, out);
  if (!bodyless && !body.empty()) {
    const size_t old = out.size();
    out.resize(old + body.size());
    std::memcpy(out.data() + old, body.data(), body.size());
  }
}

void serialize_head(const HttpHead& head, Direction dir, size_t body_bytes, bool framed,
                    bool bodyless, std::string& out) {
  const std::string version = "HTTP/1." + std::to_string(head.version_minor);
  if (dir == Direction::kRequest) {
    out += head.method;
    out += ' ';
    out += head.target;
    out += ' ';
    out += version;
  } else {
    out += version;
    out += ' ';
    out += std::to_string(head.status);
    out += ' ';
    out += head.reason;
  }
  out += "\r\n";
  for (const auto& [k, v] : head.headers) {
    if (!bodyless && (iequals(k, "content-length") || iequals(k, "transfer-encoding"))) continue;
    if (dir == Direction::kRequest && iequals(k, "expect") && iequals(v, "100-continue")) continue;
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  const bool length = !bodyless && (dir == Direction::kResponse || framed || body_bytes > 0);
  if (length) {
    out += "Content-Length: ";
    out += std::to_string(body_bytes);
    out += "\r\n";
  }
  out += "\r\n";
}

void local_response(int status, std::string_view why, bool close, std::string& out) {
  std::string body = std::to_string(status) + " " + std::string(reason_phrase(status));
  if (!why.empty()) body += ": " + std::string(why);
  body += "\n";
  out += "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) + "\r\n";
  out += "Server: fulcrum\r\nContent-Type: text/plain\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  out += body;
}

}  // namespace fulcrum::l7::http
