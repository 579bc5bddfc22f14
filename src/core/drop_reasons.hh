// DropReasons: an element's drop reasons, one table. A reason is named by its text where the
// element drops, and the name is looked up at compile time, so a misspelt or missing reason does
// not compile and no enum has to be kept in step with the names:
//
//   static constexpr DropReasons kDropReasons{"truncated", "not-ipv4"};
//   static constexpr ElementTraits kTraits{"CheckIPHeader", 1, 1, kDropReasons};
//   ... return Verdict::drop(kDropReasons["not-ipv4"]);
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace fulcrum {

template <size_t N>
class DropReasons {
 public:
  template <class... S>
  constexpr DropReasons(const S&... names) : names_{std::string_view(names)...} {}

  // The index of reason `name`; a name not in the table is a compile error.
  consteval int operator[](std::string_view name) const {
    for (size_t i = 0; i < N; ++i)
      if (names_[i] == name) return static_cast<int>(i);
    throw "not a drop reason of this element";
  }
  constexpr std::string_view name(size_t i) const { return names_[i]; }
  constexpr size_t size() const { return N; }
  constexpr operator std::span<const std::string_view>() const { return names_; }

 private:
  std::array<std::string_view, N> names_;
};

template <class... S>
DropReasons(const S&...) -> DropReasons<sizeof...(S)>;

}  // namespace fulcrum
