// The unit of L7 processing (paper 004 §III-A): one reassembled message of one flow. The proxy
// (src/l7/proxy) turns each HTTP request and response into a Message (head parsed, body
// de-chunked), or each read of a non-HTTP byte stream into a raw chunk, and hands it to a
// Processor (processor.hh); network functions (src/l7/nf) see messages of a flow in order, with
// the flow's state, and leave a Verdict.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fulcrum::l7 {

// A connection through the proxy, client side and backend side together. Unique per Processor.
using FlowId = uint64_t;

enum class Direction : uint8_t { kRequest, kResponse };

// The parsed head of an HTTP/1.x message.
struct HttpHead {
  std::string method;  // requests: "GET", ...
  std::string target;  // requests: the request-target as sent ("/a?b=c")
  int status = 0;      // responses: 200, ...
  std::string reason;  // responses: "OK"
  uint8_t version_minor = 1;
  // In arrival order, names as sent; repeated names kept.
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header called `name` (ASCII case-insensitive); empty when absent.
  std::string_view header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k.size() != name.size()) continue;
      bool same = true;
      for (size_t i = 0; i < k.size() && same; ++i) {
        const char a = k[i] >= 'A' && k[i] <= 'Z' ? static_cast<char>(k[i] + 32) : k[i];
        const char b = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] + 32) : name[i];
        same = a == b;
      }
      if (same) return v;
    }
    return {};
  }
};

// What happens to a message once the chain has run. The first NF that sets an action other than
// kForward ends the chain for that message.
enum class Action : uint8_t {
  kForward,  // pass on (to the backend for a request, to the client for a response)
  kRespond,  // answer the client with `status` instead (403 from the WAF, 502, ...)
  kClose,    // close the connection without an answer
};

struct Verdict {
  Action action = Action::kForward;
  uint16_t status = 0;  // kRespond: the HTTP status sent to the client
  std::string reason;   // for the log: "<nf>: <rule id / why>"
  int backend = -1;     // requests: the backend chosen by a balancer NF; -1: the default
  uint32_t alerts = 0;  // alerts raised on this message (IDS, WAF in detection-only mode)
};

struct Message {
  FlowId flow = 0;
  Direction dir = Direction::kRequest;
  uint64_t seq = 0;  // position within the flow and direction, from 0
  bool http = true;  // false: `body` is a raw chunk of a non-HTTP stream, `head` is empty
  HttpHead head;
  std::vector<uint8_t> body;  // de-chunked body (or the raw chunk); NFs may rewrite it
  Verdict verdict;
  uint64_t arrival_ns = 0;  // when the proxy had the whole message (CLOCK_MONOTONIC)

  size_t bytes() const { return body.size(); }
};

}  // namespace fulcrum::l7
