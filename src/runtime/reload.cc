#include "runtime/reload.hh"

#include <algorithm>
#include <cstdio>

#include "core/graph.hh"

namespace fulcrum {

std::vector<ReloadableTable> reloadable_tables(Pipeline& pipeline) {
  std::vector<ReloadableTable> out;
  for (const Node& n : pipeline.nodes())
    if (TableSlotBase* slot = n.element->table_slot(); slot != nullptr)
      out.push_back(ReloadableTable{n.element->name(), n.class_name, slot});
  return out;
}

Reloader::Reloader(std::vector<ReloadableTable> tables, Rcu& rcu,
                   std::chrono::milliseconds grace_limit)
    : tables_(std::move(tables)), rcu_(rcu), grace_limit_(grace_limit) {}

ReloadCounts Reloader::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void Reloader::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
}

Result<std::string> Reloader::replace(TableSlotBase& slot, const std::string& file) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::shared_ptr<const void>> old = slot.replace(file);
  if (!old) {
    ++counts_.failed;
    return make_error(old.error() + " (the " + slot.kind() + " in service stay)");
  }
  ++counts_.done;
  const bool freed = rcu_.synchronize(grace_limit_);
  std::string handover;
  if (freed) {
    if (Status s = slot.settle(old.value()); !s) {
      ++counts_.failed;
      handover = "; " + s.error();
    }
  } else {
    retired_.push_back(std::move(old.value()));
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.0f ms", ms);
  return slot.kind() + " from " + file + " in service (" + took +
         (freed ? "" : "; a worker did not pass a quiescent point in time: the old table is kept") +
         handover + ")";
}

Result<std::string> Reloader::reload(const std::string& element, const std::string& file) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return make_error("the run is ending: no reload");
  if (tables_.empty()) return make_error("this pipeline has no reloadable table");
  std::vector<TableSlotBase*> slots;
  for (const ReloadableTable& t : tables_)
    if ((element.empty() || t.element == element) &&
        std::find(slots.begin(), slots.end(), t.slot) == slots.end())
      slots.push_back(t.slot);
  if (slots.empty()) {
    std::string names;
    for (const ReloadableTable& t : tables_) names += (names.empty() ? "" : ", ") + t.element;
    return make_error("no reloadable table in an element named '" + element +
                      "' (reloadable: " + names + ")");
  }
  if (slots.size() > 1 && !file.empty())
    return make_error("a file was given for " + std::to_string(slots.size()) +
                      " tables: name the element it is for");
  std::string done;
  std::string errors;
  for (TableSlotBase* slot : slots) {
    std::string users;
    for (const ReloadableTable& t : tables_)
      if (t.slot == slot)
        users += (users.empty() ? "" : ", ") + t.element + " (" + t.class_name + ")";
    Result<std::string> r = replace(*slot, file.empty() ? slot->file() : file);
    (r ? done : errors) += users + ": " + (r ? r.value() : r.error()) + "\n";
  }
  if (!errors.empty()) return make_error(errors + (done.empty() ? "" : "reloaded: " + done));
  return done;
}

bool BackgroundReload::start(const char* why) {
  if (busy_.load()) return false;
  join();
  busy_.store(true);
  thread_ = std::thread([this, why] {
    const Result<std::string> r = reloader_->reload("", "");
    std::string text = r ? r.value() : r.error();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    std::fprintf(stderr, "fulcrum: reload (%s) %s:\n%s\n", why, r ? "done" : "FAILED",
                 text.c_str());
    busy_.store(false);
  });
  return true;
}

void BackgroundReload::join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace fulcrum
