#include <cstdio>
#include <string>

#include "cli/commands.hh"
#include "core/registry.hh"

namespace fulcrum::cli {

int cmd_elements(const std::vector<std::string>& args) {
  const Registry& reg = Registry::instance();
  if (args.empty()) {
    for (const auto& [name, info] : reg.all()) {
      std::string_view doc = element_doc(name);
      std::string_view summary = doc.substr(0, doc.find('\n'));
      const size_t dash = summary.find(" — ");
      if (dash != std::string_view::npos)
        summary = summary.substr(dash + std::string_view(" — ").size());
      std::printf("%-18s %.*s\n", name.c_str(), static_cast<int>(summary.size()), summary.data());
    }
    return 0;
  }
  const ElementClassInfo* info = reg.find(args[0]);
  if (info == nullptr) {
    std::fprintf(stderr,
                 "fulcrum elements: no element class '%s' (run `fulcrum elements` for the list)\n",
                 args[0].c_str());
    return 1;
  }
  std::string_view doc = element_doc(args[0]);
  std::printf("%.*s", static_cast<int>(doc.size()), doc.data());
  const ElementTraits& t = *info->traits;
  std::printf("\nInputs: %d. Outputs: %s.", t.inputs,
              t.outputs == kConfiguredOutputs ? "set by the configuration"
                                              : std::to_string(t.outputs).c_str());
  if (!t.drop_reasons.empty()) {
    std::printf(" Drop reasons:");
    for (size_t i = 0; i < t.drop_reasons.size(); ++i)
      std::printf("%s %.*s", i ? "," : "", static_cast<int>(t.drop_reasons[i].size()),
                  t.drop_reasons[i].data());
    std::printf(".");
  }
  std::printf("\n");
  return 0;
}

}  // namespace fulcrum::cli
