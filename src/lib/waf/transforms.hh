// ModSecurity's transformation functions (the `t:` actions of a SecRule), byte for byte as
// libmodsecurity 3.0.9 computes them, including its quirks (cssDecode and utf8toUnicode stop at
// the first NUL, htmlEntityDecode keeps the low byte of a numeric entity, urlDecodeUni keeps the
// low byte of %uHHHH with ModSecurity's full-width ASCII fix-up). docs/l7-waf.md lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::waf {

enum class Transform : uint8_t {
  kLowercase,
  kUppercase,
  kUrlDecode,
  kUrlDecodeUni,
  kHtmlEntityDecode,
  kJsDecode,
  kCssDecode,
  kRemoveNulls,
  kReplaceNulls,
  kCompressWhitespace,
  kRemoveWhitespace,
  kReplaceComments,
  kRemoveCommentsChar,
  kNormalisePath,
  kNormalisePathWin,
  kCmdLine,
  kUtf8ToUnicode,
  kBase64Decode,
  kHexDecode,
  kHexEncode,
  kLength,
  kSha1,
  kTrim,
  kTrimLeft,
  kTrimRight,
};

// The transformation called `name` as a rule spells it (case-insensitive, both normalisePath
// spellings); nullopt when not supported. "none" is not a transformation (the parser handles it).
std::optional<Transform> parse_transform(std::string_view name);
std::string_view transform_name(Transform t);

// SecUnicodeMapFile's table for urlDecodeUni: code point -> byte, -1 where unmapped.
using UnicodeMap = std::vector<int>;

// Reads code page `codepage` of a ModSecurity unicode.mapping file (with ModSecurity's four
// built-in full-stop mappings); nullopt when the file cannot be read.
std::optional<UnicodeMap> load_unicode_map(const std::string& path, unsigned codepage);

// Applies `t` to `s` in place (`map`: the unicode map urlDecodeUni uses, when configured).
void apply_transform(Transform t, std::string& s, const UnicodeMap* map = nullptr);

// Applies a pipeline in order.
inline void apply_transforms(const std::vector<Transform>& ts, std::string& s,
                             const UnicodeMap* map = nullptr) {
  for (Transform t : ts) apply_transform(t, s, map);
}

}  // namespace fulcrum::waf
