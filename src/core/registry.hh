// The element registry: class name -> factory, traits and manual. An element registers itself
// with FULCRUM_REGISTER_ELEMENT(T) at the end of its header: an inline variable, so however many
// files include the header, T is registered once. The build compiles every element header
// (generated/element_headers.cc), so an element needs no .cc file of its own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"

namespace fulcrum {

struct ElementClassInfo {
  const ElementTraits* traits;
  std::function<std::unique_ptr<Element>()> create;
};

class Registry {
 public:
  static Registry& instance();

  void add(const ElementTraits& traits, std::function<std::unique_ptr<Element>()> create);
  const ElementClassInfo* find(std::string_view class_name) const;
  const std::map<std::string, ElementClassInfo, std::less<>>& all() const { return classes_; }

 private:
  std::map<std::string, ElementClassInfo, std::less<>> classes_;
};

// The manual of an element class: its header doc block, extracted at build time.
std::string_view element_doc(std::string_view class_name);

template <ElementClass T>
struct ElementRegistration {
  ElementRegistration() {
    Registry::instance().add(T::kTraits, [] { return std::unique_ptr<Element>(new T()); });
  }
};

#define FULCRUM_REGISTER_ELEMENT(T) \
  inline const ::fulcrum::ElementRegistration<T> fulcrum_registration_##T {}

}  // namespace fulcrum
