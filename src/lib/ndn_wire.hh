// NDN wire format as Fulcrum reads it: NDN Packet Format v0.3 (TLV) over Ethernet.
//
//   Ethernet header (14 bytes), EtherType 0x8624 (the NDN EtherType)
//   Interest (type 0x05) or Data (type 0x06) TLV:  TYPE LENGTH VALUE
//     its VALUE starts with the Name TLV (type 0x07), whose VALUE is a sequence of name
//     components, each itself a TLV (GenericNameComponent is type 0x08; any type is accepted
//     and compared as bytes).
//
// TYPE and LENGTH are NDN variable-size numbers: one byte 0..252, or 253 followed by 2 bytes,
// 254 followed by 4 bytes (network order); 255 (8-byte numbers) is rejected here.
//
// A name prefix of c components is a byte prefix of the Name VALUE: the first c component TLVs.
// Names are written as URIs, "/a/b/c": components between slashes, %XX escapes allowed, no
// empty components; "/" is the empty name (zero components).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::ndn {

inline constexpr uint16_t kEtherType = 0x8624;
inline constexpr uint32_t kEtherHeaderLen = 14;
inline constexpr uint32_t kEtherTypeOffset = 12;
inline constexpr uint8_t kTypeInterest = 0x05;
inline constexpr uint8_t kTypeData = 0x06;
inline constexpr uint8_t kTypeName = 0x07;
inline constexpr uint8_t kTypeGenericComponent = 0x08;
inline constexpr uint8_t kVarNumber16 = 253;
inline constexpr uint8_t kVarNumber32 = 254;
inline constexpr uint8_t kVarNumber64 = 255;

// Reads a variable-size number at p[*pos] (p has `len` bytes); advances *pos. False when it
// does not fit or is an 8-byte number.
inline bool read_var(const uint8_t* p, uint32_t len, uint32_t* pos, uint32_t* out) {
  constexpr uint32_t kBytes16 = 2, kBytes32 = 4, kBitsPerByte = 8;
  if (*pos >= len) return false;
  const uint8_t first = p[(*pos)++];
  uint32_t extra = 0;
  if (first < kVarNumber16) {
    *out = first;
    return true;
  }
  if (first == kVarNumber16)
    extra = kBytes16;
  else if (first == kVarNumber32)
    extra = kBytes32;
  else
    return false;
  if (len - *pos < extra) return false;
  uint32_t v = 0;
  for (uint32_t i = 0; i < extra; ++i) v = (v << kBitsPerByte) | p[(*pos)++];
  *out = v;
  return true;
}

inline void append_var(std::string& out, uint32_t v) {
  constexpr uint32_t kMax16 = 0xFFFF, kBitsPerByte = 8;
  constexpr uint8_t kByteMask = 0xFF;
  if (v < kVarNumber16) {
    out.push_back(static_cast<char>(v));
  } else if (v <= kMax16) {
    out.push_back(static_cast<char>(kVarNumber16));
    out.push_back(static_cast<char>(v >> kBitsPerByte));
    out.push_back(static_cast<char>(v & kByteMask));
  } else {
    out.push_back(static_cast<char>(kVarNumber32));
    for (int shift = 24; shift >= 0; shift -= kBitsPerByte)
      out.push_back(static_cast<char>((v >> shift) & kByteMask));
  }
}

// The Name VALUE (concatenated GenericNameComponent TLVs) of `components`.
inline std::string encode_components(const std::vector<std::string>& components) {
  std::string out;
  for (const std::string& c : components) {
    out.push_back(static_cast<char>(kTypeGenericComponent));
    append_var(out, static_cast<uint32_t>(c.size()));
    out += c;
  }
  return out;
}

// The components of a URI "/a/b%2Fc"; nullopt when it does not start with '/', has an empty
// component or a bad %XX escape.
inline std::optional<std::vector<std::string>> parse_uri(std::string_view uri) {
  constexpr int kHexBase = 16;
  constexpr size_t kEscapeLen = 3;
  if (uri.empty() || uri[0] != '/') return std::nullopt;
  std::vector<std::string> out;
  if (uri.size() == 1) return out;
  size_t i = 1;
  while (i <= uri.size()) {
    const size_t end = std::min(uri.find('/', i), uri.size());
    if (end == i) return std::nullopt;
    std::string comp;
    for (size_t j = i; j < end; ++j) {
      if (uri[j] != '%') {
        comp.push_back(uri[j]);
        continue;
      }
      if (j + kEscapeLen > end) return std::nullopt;
      int v = 0;
      for (size_t k = j + 1; k < j + kEscapeLen; ++k) {
        const char c = uri[k];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0) return std::nullopt;
        v = v * kHexBase + d;
      }
      comp.push_back(static_cast<char>(v));
      j += kEscapeLen - 1;
    }
    out.push_back(std::move(comp));
    i = end + 1;
  }
  return out;
}

// An Ethernet frame carrying an Interest for `components` (the test and benchmark traffic).
inline std::vector<uint8_t> interest_frame(const std::vector<std::string>& components,
                                           const uint8_t dst[6], const uint8_t src[6]) {
  constexpr uint32_t kMacLen = 6, kBitsPerByte = 8;
  constexpr uint8_t kByteMask = 0xFF;
  const std::string value = encode_components(components);
  std::string name(1, static_cast<char>(kTypeName));
  append_var(name, static_cast<uint32_t>(value.size()));
  name += value;
  std::string interest(1, static_cast<char>(kTypeInterest));
  append_var(interest, static_cast<uint32_t>(name.size()));
  interest += name;
  std::string f(reinterpret_cast<const char*>(dst), kMacLen);
  f.append(reinterpret_cast<const char*>(src), kMacLen);
  f.push_back(static_cast<char>(kEtherType >> kBitsPerByte));
  f.push_back(static_cast<char>(kEtherType & kByteMask));
  f += interest;
  return std::vector<uint8_t>(f.begin(), f.end());
}

}  // namespace fulcrum::ndn
