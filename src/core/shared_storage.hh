// Node-local shared storage (NBA §3.1): large read-mostly state, such as routing tables, built
// once and shared by every worker's pipeline replica. Keyed by a string (e.g.
// "dir24_8:routes.txt").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.hh"

namespace fulcrum {

class SharedStorage {
 public:
  // Returns the object stored under `key`, building it with `make` on first use. Thread-safe;
  // the object is never destroyed before the storage.
  template <class T>
  Result<std::shared_ptr<const T>> get_or_build(
      const std::string& key, const std::function<Result<std::shared_ptr<T>>()>& make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(key);
    if (it != objects_.end()) return std::static_pointer_cast<const T>(it->second);
    Result<std::shared_ptr<T>> built = make();
    if (!built) return make_error(built.error());
    objects_.emplace(key, built.value());
    return std::shared_ptr<const T>(built.value());
  }

  // The object under `key` when one was built, else nullptr.
  template <class T>
  std::shared_ptr<const T> find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : std::static_pointer_cast<const T>(it->second);
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<void>> objects_;
};

// The object from `shared` under `key` (built once), or, without shared storage (a lone element
// in a test), one built for the caller alone.
template <class T>
Result<std::shared_ptr<const T>> shared_or_own(
    SharedStorage* shared, const std::string& key,
    const std::function<Result<std::shared_ptr<T>>()>& make) {
  if (shared != nullptr) return shared->get_or_build<T>(key, make);
  Result<std::shared_ptr<T>> own = make();
  if (!own) return make_error(own.error());
  return std::shared_ptr<const T>(own.value());
}

}  // namespace fulcrum
