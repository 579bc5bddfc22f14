#include "core/registry.hh"

namespace fulcrum {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(const ElementTraits& traits, std::function<std::unique_ptr<Element>()> create) {
  classes_.emplace(std::string(traits.class_name), ElementClassInfo{&traits, std::move(create)});
}

const ElementClassInfo* Registry::find(std::string_view class_name) const {
  auto it = classes_.find(class_name);
  return it == classes_.end() ? nullptr : &it->second;
}

}  // namespace fulcrum
