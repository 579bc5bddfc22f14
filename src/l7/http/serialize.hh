// Putting parsed HTTP/1.x messages (parser.hh) back on the wire, for the L7 proxy.
//
// A message with a body is re-emitted with "Content-Length: <body size>" in place of its
// Content-Length or Transfer-Encoding (a chunked body goes out de-chunked, as one piece); the
// other headers keep their names, values and order. A response without a body by definition
// (to HEAD, 204, 304) keeps its head as sent, its Content-Length included. "Expect:
// 100-continue" is dropped from requests (the proxy answers the 100 itself).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "l7/flow/message.hh"

namespace fulcrum::l7::http {

// Appends the wire form of a message to `out`. `framed`: the original head had
// Content-Length or Transfer-Encoding (a request without them and without a body stays so);
// `bodyless`: a response without a body by definition.
void serialize(const HttpHead& head, Direction dir, std::span<const uint8_t> body, bool framed,
               bool bodyless, std::string& out);

// The head alone (what serialize() writes before the body), for a body of `body_bytes` sent
// after it as it is.
void serialize_head(const HttpHead& head, Direction dir, size_t body_bytes, bool framed,
                    bool bodyless, std::string& out);

// A small response of the proxy's own ("HTTP/1.1 403 Forbidden", text body naming `why`).
// `close`: adds "Connection: close".
void local_response(int status, std::string_view why, bool close, std::string& out);

// The reason phrase of a status code ("Bad Gateway"); "Unknown" for codes not listed.
std::string_view reason_phrase(int status);

}  // namespace fulcrum::l7::http
