// Each function follows libmodsecurity 3.0.9's src/actions/transformations/<name>.cc.
#include "lib/waf/transforms.hh"

#include <openssl/sha.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fulcrum::waf {
namespace {

using u8 = unsigned char;

bool valid_hex(u8 c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_odigit(u8 c) {
  return c >= '0' && c <= '7';
}
u8 hex1(u8 c) {
  return c >= 'A' ? static_cast<u8>((c & 0xdf) - 'A' + 10) : static_cast<u8>(c - '0');
}
u8 x2c(const u8* p) {
  return static_cast<u8>(hex1(p[0]) * 16 + hex1(p[1]));
}
bool c_isspace(u8 c) {
  return std::isspace(c) != 0;
}

// The byte at i, or 0 past the end (the C code reads the string's terminating NUL there).
u8 at(const std::string& s, size_t i) {
  return i < s.size() ? static_cast<u8>(s[i]) : 0;
}

void url_decode(std::string& s, bool plus_to_space) {
  std::string d;
  d.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const u8 c = static_cast<u8>(s[i]);
    if (c == '%' && i + 2 < n && valid_hex(at(s, i + 1)) && valid_hex(at(s, i + 2))) {
      d.push_back(static_cast<char>(x2c(reinterpret_cast<const u8*>(s.data()) + i + 1)));
      i += 3;
    } else {
      d.push_back(plus_to_space && c == '+' ? ' ' : static_cast<char>(c));
      ++i;
    }
  }
  s = std::move(d);
}

void url_decode_uni(std::string& s, const UnicodeMap* map) {
  const auto* in = reinterpret_cast<const u8*>(s.data());
  const size_t n = s.size();
  std::string d;
  d.reserve(n);
  size_t i = 0;
  while (i < n) {
    if (in[i] == '%') {
      if (i + 1 < n && (in[i + 1] == 'u' || in[i + 1] == 'U')) {
        if (i + 5 < n) {
          if (valid_hex(in[i + 2]) && valid_hex(in[i + 3]) && valid_hex(in[i + 4]) &&
              valid_hex(in[i + 5])) {
            int mapped = -1;
            if (map != nullptr) {
              const int code = (hex1(in[i + 2]) << 12) | (hex1(in[i + 3]) << 8) |
                               (hex1(in[i + 4]) << 4) | hex1(in[i + 5]);
              mapped = (*map)[static_cast<size_t>(code)];
            }
            u8 c;
            if (mapped != -1) {
              c = static_cast<u8>(mapped);
            } else {
              c = x2c(in + i + 4);
              if (c > 0x00 && c < 0x5f && (in[i + 2] == 'f' || in[i + 2] == 'F') &&
                  (in[i + 3] == 'f' || in[i + 3] == 'F'))
                c = static_cast<u8>(c + 0x20);
            }
            d.push_back(static_cast<char>(c));
            i += 6;
          } else {
            d.push_back(static_cast<char>(in[i++]));
            d.push_back(static_cast<char>(in[i++]));
          }
        } else {
          d.push_back(static_cast<char>(in[i++]));
          d.push_back(static_cast<char>(in[i++]));
        }
      } else if (i + 2 < n && valid_hex(in[i + 1]) && valid_hex(in[i + 2])) {
        d.push_back(static_cast<char>(x2c(in + i + 1)));
        i += 3;
      } else {
        d.push_back(static_cast<char>(in[i++]));
      }
    } else {
      d.push_back(in[i] == '+' ? ' ' : static_cast<char>(in[i]));
      ++i;
    }
  }
  s = std::move(d);
}

void html_entity_decode(std::string& s) {
  const size_t n = s.size();
  if (n == 0) return;
  const auto* in = reinterpret_cast<const u8*>(s.data());
  std::string d;
  d.reserve(n);
  size_t i = 0, count = 0;
  while (i < n && count < n) {
    size_t copy = 1;
    if (in[i] == '&' && i + 1 < n) {
      size_t j = i + 1;
      if (in[j] == '#') {
        ++copy;
        if (j + 1 < n) {
          ++j;
          const bool hex = in[j] == 'x' || in[j] == 'X';
          bool ok = true;
          if (hex) {
            ++copy;
            if (!(j + 1 < n))
              ok = false;
            else
              ++j;
          }
          if (ok) {
            const size_t k = j;
            while (j < n && (hex ? std::isxdigit(in[j]) : std::isdigit(in[j]))) ++j;
            if (j > k) {
              const std::string digits(reinterpret_cast<const char*>(in + k), j - k);
              d.push_back(static_cast<char>(
                  static_cast<u8>(std::strtol(digits.c_str(), nullptr, hex ? 16 : 10))));
              ++count;
              i = (j < n && in[j] == ';') ? j + 1 : j;
              continue;
            }
          }
        }
      } else {
        const size_t k = j;
        while (j < n && std::isalnum(in[j])) ++j;
        if (j > k) {
          const std::string name(reinterpret_cast<const char*>(in + k), j - k);
          int c = -1;
          if (strcasecmp(name.c_str(), "quot") == 0)
            c = '"';
          else if (strcasecmp(name.c_str(), "amp") == 0)
            c = '&';
          else if (strcasecmp(name.c_str(), "lt") == 0)
            c = '<';
          else if (strcasecmp(name.c_str(), "gt") == 0)
            c = '>';
          else if (strcasecmp(name.c_str(), "nbsp") == 0)
            c = 0xa0;
          if (c >= 0) {
            d.push_back(static_cast<char>(c));
            ++count;
            i = (j < n && in[j] == ';') ? j + 1 : j;
            continue;
          }
          copy = j - k + 1;
        }
      }
    }
    for (size_t z = 0; z < copy && count < n; ++z) {
      d.push_back(static_cast<char>(at(s, i++)));
      ++count;
    }
  }
  s = std::move(d);
}

void js_decode(std::string& s) {
  const auto* in = reinterpret_cast<const u8*>(s.data());
  const size_t n = s.size();
  std::string d;
  d.reserve(n);
  size_t i = 0;
  while (i < n) {
    if (in[i] != '\\') {
      d.push_back(static_cast<char>(in[i++]));
      continue;
    }
    if (i + 5 < n && in[i + 1] == 'u' && valid_hex(in[i + 2]) && valid_hex(in[i + 3]) &&
        valid_hex(in[i + 4]) && valid_hex(in[i + 5])) {
      u8 c = x2c(in + i + 4);
      if (c > 0x00 && c < 0x5f && (in[i + 2] == 'f' || in[i + 2] == 'F') &&
          (in[i + 3] == 'f' || in[i + 3] == 'F'))
        c = static_cast<u8>(c + 0x20);
      d.push_back(static_cast<char>(c));
      i += 6;
    } else if (i + 3 < n && in[i + 1] == 'x' && valid_hex(in[i + 2]) && valid_hex(in[i + 3])) {
      d.push_back(static_cast<char>(x2c(in + i + 2)));
      i += 4;
    } else if (i + 1 < n && is_odigit(in[i + 1])) {
      char buf[4];
      size_t j = 0;
      while (i + 1 + j < n && j < 3) {
        buf[j] = static_cast<char>(in[i + 1 + j]);
        ++j;
        if (!is_odigit(at(s, i + 1 + j))) break;
      }
      buf[j] = '\0';
      if (j == 3 && buf[0] > '3') {
        j = 2;
        buf[j] = '\0';
      }
      d.push_back(static_cast<char>(static_cast<u8>(std::strtol(buf, nullptr, 8))));
      i += 1 + j;
    } else if (i + 1 < n) {
      u8 c = in[i + 1];
      switch (c) {
        case 'a':
          c = '\a';
          break;
        case 'b':
          c = '\b';
          break;
        case 'f':
          c = '\f';
          break;
        case 'n':
          c = '\n';
          break;
        case 'r':
          c = '\r';
          break;
        case 't':
          c = '\t';
          break;
        case 'v':
          c = '\v';
          break;
        default:
          break;
      }
      d.push_back(static_cast<char>(c));
      i += 2;
    } else {
      while (i < n) d.push_back(static_cast<char>(in[i++]));
    }
  }
  s = std::move(d);
}

void css_decode(std::string& s) {
  const auto* in = reinterpret_cast<const u8*>(s.data());
  const size_t n = s.size();
  std::string d;
  d.reserve(n);
  size_t i = 0;
  while (i < n) {
    if (in[i] != '\\') {
      d.push_back(static_cast<char>(in[i++]));
      continue;
    }
    if (!(i + 1 < n)) {
      ++i;
      continue;
    }
    ++i;
    size_t j = 0;
    while (j < 6 && i + j < n && valid_hex(in[i + j])) ++j;
    if (j > 0) {
      u8 c = 0;
      bool fullcheck = false;
      switch (j) {
        case 1:
          c = hex1(in[i]);
          break;
        case 2:
        case 3:
          c = x2c(in + i + j - 2);
          break;
        case 4:
          c = x2c(in + i + j - 2);
          fullcheck = true;
          break;
        case 5:
          c = x2c(in + i + j - 2);
          fullcheck = in[i] == '0';
          break;
        default:
          c = x2c(in + i + j - 2);
          fullcheck = in[i] == '0' && in[i + 1] == '0';
          break;
      }
      if (fullcheck && c > 0x00 && c < 0x5f && (in[i + j - 3] == 'f' || in[i + j - 3] == 'F') &&
          (in[i + j - 4] == 'f' || in[i + j - 4] == 'F'))
        c = static_cast<u8>(c + 0x20);
      d.push_back(static_cast<char>(c));
      if (i + j < n && c_isspace(in[i + j])) ++j;
      i += j;
    } else if (in[i] == '\n') {
      ++i;
    } else {
      d.push_back(static_cast<char>(in[i++]));
    }
  }
  // ModSecurity returns the decoded buffer as a C string: it ends at the first NUL.
  const size_t nul = d.find('\0');
  if (nul != std::string::npos) d.resize(nul);
  s = std::move(d);
}

void utf8_to_unicode(std::string& s) {
  // ModSecurity runs over the string and its terminating NUL, and returns a C string.
  std::string in = s;
  in.push_back('\0');
  const size_t input_len = in.size();
  std::string d;
  d.reserve(input_len * 2);
  auto u = [&](size_t k) { return at(in, k); };
  auto put_code = [&](unsigned code) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", code);
    const size_t len = std::strlen(hex);
    d += "%u";
    for (size_t p = len; p < 4; ++p) d.push_back('0');
    // ModSecurity formats into an 8-byte buffer: at most 7 digits.
    d.append(hex, len > 7 ? 7 : len);
  };
  for (size_t i = 0; i < input_len;) {
    int unicode_len = 0;
    unsigned code = 0;
    const u8 c = u(i);
    if ((c & 0x80) == 0) {
      // A NUL followed by more input is not copied (the C code writes without advancing).
      if (!(c == 0 && input_len > i + 1)) d.push_back(static_cast<char>(c));
    } else if ((c & 0xE0) == 0xC0) {
      if ((u(i + 1) & 0xC0) != 0x80) {
        unicode_len = -1;
      } else {
        unicode_len = 2;
        code = ((c & 0x1Fu) << 6) | (u(i + 1) & 0x3Fu);
        put_code(code);
      }
    } else if ((c & 0xF0) == 0xE0) {
      if ((u(i + 1) & 0xC0) != 0x80 || (u(i + 2) & 0xC0) != 0x80) {
        unicode_len = -1;
      } else {
        unicode_len = 3;
        code = ((c & 0x0Fu) << 12) | ((u(i + 1) & 0x3Fu) << 6) | (u(i + 2) & 0x3Fu);
        put_code(code);
      }
    } else if ((c & 0xF8) == 0xF0) {
      if (c >= 0xF5) d.push_back(static_cast<char>(c));
      if ((u(i + 1) & 0xC0) != 0x80 || (u(i + 2) & 0xC0) != 0x80 || (u(i + 3) & 0xC0) != 0x80) {
        unicode_len = -1;
      } else {
        unicode_len = 4;
        code = ((c & 0x07u) << 18) | ((u(i + 1) & 0x3Fu) << 12) | ((u(i + 2) & 0x3Fu) << 6) |
               (u(i + 3) & 0x3Fu);
        put_code(code);
      }
    } else {
      d.push_back(static_cast<char>(c));
    }
    if (code >= 0xD800 && code <= 0xDFFF) d.push_back(static_cast<char>(c));
    if ((unicode_len == 4 && code < 0x010000) || (unicode_len == 3 && code < 0x0800) ||
        (unicode_len == 2 && code < 0x80))
      d.push_back(static_cast<char>(c));
    i += unicode_len > 0 ? static_cast<size_t>(unicode_len) : 1;
  }
  const size_t nul = d.find('\0');
  if (nul != std::string::npos) d.resize(nul);
  s = std::move(d);
}

void normalise_path(std::string& s, bool win) {
  const int input_len = static_cast<int>(s.size());
  if (input_len <= 0) return;
  auto* input = reinterpret_cast<u8*>(s.data());
  u8* src = input;
  u8* dst = input;
  u8* end = input + (input_len - 1);
  int ldst = 1;
  int hitroot = 0;
  int done = 0;
  const int relative = (*input == '/' || (win && *input == '\\')) ? 0 : 1;
  const int trailing = (*end == '/' || (win && *end == '\\')) ? 1 : 0;
  while (!done && src <= end && dst <= end) {
    if (win) {
      if (*src == '\\') *src = '/';
      if (src < end && *(src + 1) == '\\') *(src + 1) = '/';
    }
    if (src == end) {
      done = 1;
    } else if (*(src + 1) != '/') {
      goto copy;
    }
    if (src != end && *src == '/') {
      goto copy;
    } else if (*src == '.') {
      if (dst > input && *(dst - 1) == '.') {
        if (relative && (hitroot || (dst - 2) <= input)) {
          hitroot = 1;
          goto copy;
        }
        dst -= 3;
        while (dst > input && *dst != '/') dst--;
        if (dst <= input) {
          hitroot = 1;
          dst = input;
          if (!relative && src == end) dst++;
        }
        if (done) goto length;
        src++;
      } else if (dst == input) {
        if (done) goto length;
        src++;
      } else if (*(dst - 1) == '/') {
        if (done) goto length;
        dst--;
        src++;
      }
    } else if (dst > input) {
      hitroot = 0;
    }
  copy:
    if (*src == '/') {
      while (src < end && (*(src + 1) == '/' || (win && *(src + 1) == '\\'))) src++;
      if (relative && dst == input) {
        src++;
        goto length;
      }
    }
    *(dst++) = *(src++);
  length:
    ldst = static_cast<int>(dst - input);
  }
  if (!trailing && dst > input && *(dst - 1) == '/') {
    ldst--;
    dst--;
  }
  s.resize(static_cast<size_t>(ldst));
}

void cmd_line(std::string& s) {
  std::string ret;
  ret.reserve(s.size());
  int space = 0;
  for (char a : s) {
    switch (a) {
      case '"':
      case '\'':
      case '\\':
      case '^':
        break;
      case ' ':
      case ',':
      case ';':
      case '\t':
      case '\r':
      case '\n':
        if (space == 0) {
          ret.push_back(' ');
          space++;
        }
        break;
      case '/':
      case '(':
        if (space) ret.pop_back();
        space = 0;
        ret.push_back(a);
        break;
      default:
        ret.push_back(static_cast<char>(std::tolower(static_cast<u8>(a))));
        space = 0;
        break;
    }
  }
  s = std::move(ret);
}

void replace_comments(std::string& s) {
  std::string d;
  d.reserve(s.size());
  size_t i = 0;
  bool incomment = false;
  const size_t n = s.size();
  while (i < n) {
    if (!incomment) {
      if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
        incomment = true;
        i += 2;
      } else {
        d.push_back(s[i++]);
      }
    } else if (s[i] == '*' && i + 1 < n && s[i + 1] == '/') {
      incomment = false;
      i += 2;
      d.push_back(' ');
    } else {
      ++i;
    }
  }
  if (incomment) d.push_back(' ');
  s = std::move(d);
}

void remove_comments_char(std::string& v) {
  size_t i = 0;
  while (i < v.size()) {
    auto is = [&](size_t k, char c) { return i + k < v.size() && v[i + k] == c; };
    if (is(0, '/') && is(1, '*'))
      v.erase(i, 2);
    else if (is(0, '*') && is(1, '/'))
      v.erase(i, 2);
    else if (is(0, '<') && is(1, '!') && is(2, '-') && is(3, '-'))
      v.erase(i, 4);
    else if (is(0, '-') && is(1, '-') && is(2, '>'))
      v.erase(i, 3);
    else if (is(0, '-') && is(1, '-'))
      v.erase(i, 2);
    else if (is(0, '#'))
      v.erase(i, 1);
    else
      ++i;
  }
}

void compress_whitespace(std::string& s) {
  std::string d;
  d.reserve(s.size());
  bool in_ws = false;
  for (char c : s) {
    if (c_isspace(static_cast<u8>(c))) {
      if (!in_ws) d.push_back(' ');
      in_ws = true;
    } else {
      in_ws = false;
      d.push_back(c);
    }
  }
  s = std::move(d);
}

void remove_whitespace(std::string& s) {
  std::string d;
  d.reserve(s.size());
  for (char c : s) {
    const u8 b = static_cast<u8>(c);
    if (c_isspace(b) || b == 0xa0 || b == 0xc2) continue;
    d.push_back(c);
  }
  s = std::move(d);
}

void base64_decode(std::string& s) {
  // mbedtls_base64_decode as ModSecurity calls it: whitespace-free standard alphabet with
  // padding; any invalid input decodes to nothing.
  static const std::array<int, 256> table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int k = 0; k < 64; ++k) t[static_cast<u8>(a[k])] = k;
    return t;
  }();
  std::string out;
  uint32_t acc = 0;
  int bits = 0, pad = 0;
  size_t n = 0;
  for (char c : s) {
    const u8 b = static_cast<u8>(c);
    if (b == '\r' || b == '\n' || b == ' ') continue;
    if (b == '=') {
      ++pad;
      ++n;
      continue;
    }
    if (pad > 0 || table[b] < 0) {
      s.clear();
      return;
    }
    ++n;
    acc = (acc << 6) | static_cast<uint32_t>(table[b]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (pad > 2 || n % 4 != 0) {
    s.clear();
    return;
  }
  s = std::move(out);
}

void hex_decode(std::string& s) {
  std::string d;
  d.reserve(s.size() / 2);
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    d.push_back(static_cast<char>(x2c(reinterpret_cast<const u8*>(s.data()) + i)));
  s = std::move(d);
}

void hex_encode(std::string& s) {
  static const char* lut = "0123456789abcdef";
  std::string d;
  d.reserve(s.size() * 2);
  for (char c : s) {
    d.push_back(lut[static_cast<u8>(c) >> 4]);
    d.push_back(lut[static_cast<u8>(c) & 15]);
  }
  s = std::move(d);
}

void trim(std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && c_isspace(static_cast<u8>(s[b]))) ++b;
  if (right)
    while (e > b && c_isspace(static_cast<u8>(s[e - 1]))) --e;
  s = s.substr(b, e - b);
}

struct Named {
  std::string_view name;
  Transform t;
};
constexpr Named kNames[] = {
    {"lowercase", Transform::kLowercase},
    {"uppercase", Transform::kUppercase},
    {"urlDecode", Transform::kUrlDecode},
    {"urlDecodeUni", Transform::kUrlDecodeUni},
    {"htmlEntityDecode", Transform::kHtmlEntityDecode},
    {"jsDecode", Transform::kJsDecode},
    {"cssDecode", Transform::kCssDecode},
    {"removeNulls", Transform::kRemoveNulls},
    {"replaceNulls", Transform::kReplaceNulls},
    {"compressWhitespace", Transform::kCompressWhitespace},
    {"removeWhitespace", Transform::kRemoveWhitespace},
    {"replaceComments", Transform::kReplaceComments},
    {"removeCommentsChar", Transform::kRemoveCommentsChar},
    {"normalisePath", Transform::kNormalisePath},
    {"normalizePath", Transform::kNormalisePath},
    {"normalisePathWin", Transform::kNormalisePathWin},
    {"normalizePathWin", Transform::kNormalisePathWin},
    {"cmdLine", Transform::kCmdLine},
    {"utf8toUnicode", Transform::kUtf8ToUnicode},
    {"base64Decode", Transform::kBase64Decode},
    {"hexDecode", Transform::kHexDecode},
    {"hexEncode", Transform::kHexEncode},
    {"length", Transform::kLength},
    {"sha1", Transform::kSha1},
    {"trim", Transform::kTrim},
    {"trimLeft", Transform::kTrimLeft},
    {"trimRight", Transform::kTrimRight},
};

}  // namespace

std::optional<UnicodeMap> load_unicode_map(const std::string& path, unsigned codepage) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  UnicodeMap m(65536, -1);
  m[0x3002] = 0x2e;
  m[0xff61] = 0x2e;
  m[0xff0e] = 0x2e;
  m[0x002e] = 0x2e;
  // Tokens separated by blanks: a code page number starts a section, "hhhh:hh" maps.
  bool found = false, processing = false;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::strchr(" \t\r\n", text[i]) != nullptr) ++i;
    size_t e = i;
    while (e < text.size() && std::strchr(" \t\r\n", text[e]) == nullptr) ++e;
    if (e == i) break;
    const std::string tok = text.substr(i, e - i);
    i = e;
    const bool is_map = tok.find(':') != std::string::npos;
    if (std::strtoul(tok.c_str(), nullptr, 10) == codepage) found = true;
    if (found && is_map) {
      processing = true;
      unsigned code = 0, to = 0;
      if (std::sscanf(tok.c_str(), "%x:%x", &code, &to) == 2 && code <= 65535)
        m[code] = static_cast<int>(to);
    }
    if (processing && !is_map) break;
  }
  return m;
}

std::optional<Transform> parse_transform(std::string_view name) {
  for (const Named& n : kNames) {
    if (n.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::tolower(static_cast<u8>(n.name[i])) == std::tolower(static_cast<u8>(name[i]));
    if (same) return n.t;
  }
  return std::nullopt;
}

std::string_view transform_name(Transform t) {
  for (const Named& n : kNames)
    if (n.t == t) return n.name;
  return "?";
}

void apply_transform(Transform t, std::string& s, const UnicodeMap* map) {
  switch (t) {
    case Transform::kLowercase:  // std::tolower in the C locale: ASCII only
      for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      return;
    case Transform::kUppercase:
      for (char& c : s) c = static_cast<char>(std::toupper(static_cast<u8>(c)));
      return;
    case Transform::kUrlDecode:
      return url_decode(s, true);
    case Transform::kUrlDecodeUni:
      return url_decode_uni(s, map);
    case Transform::kHtmlEntityDecode:
      return html_entity_decode(s);
    case Transform::kJsDecode:
      return js_decode(s);
    case Transform::kCssDecode:
      return css_decode(s);
    case Transform::kRemoveNulls:
      std::erase(s, '\0');
      return;
    case Transform::kReplaceNulls:
      for (char& c : s)
        if (c == '\0') c = ' ';
      return;
    case Transform::kCompressWhitespace:
      return compress_whitespace(s);
    case Transform::kRemoveWhitespace:
      return remove_whitespace(s);
    case Transform::kReplaceComments:
      return replace_comments(s);
    case Transform::kRemoveCommentsChar:
      return remove_comments_char(s);
    case Transform::kNormalisePath:
      return normalise_path(s, false);
    case Transform::kNormalisePathWin:
      return normalise_path(s, true);
    case Transform::kCmdLine:
      return cmd_line(s);
    case Transform::kUtf8ToUnicode:
      return utf8_to_unicode(s);
    case Transform::kBase64Decode:
      return base64_decode(s);
    case Transform::kHexDecode:
      return hex_decode(s);
    case Transform::kHexEncode:
      return hex_encode(s);
    case Transform::kLength:
      s = std::to_string(s.size());
      return;
    case Transform::kSha1: {
      unsigned char md[SHA_DIGEST_LENGTH];
      SHA1(reinterpret_cast<const unsigned char*>(s.data()), s.size(), md);
      s.assign(reinterpret_cast<const char*>(md), SHA_DIGEST_LENGTH);
      return;
    }
    case Transform::kTrim:
      return trim(s, true, true);
    case Transform::kTrimLeft:
      return trim(s, true, false);
    case Transform::kTrimRight:
      return trim(s, false, true);
  }
}

}  // namespace fulcrum::waf
