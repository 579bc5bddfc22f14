#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "core/args.hh"
#include "core/registry.hh"
#include "core/suggest.hh"

namespace fulcrum::cli {
namespace {

constexpr size_t kLineWidth = 100;

// Words of `text` in lines of at most `width` characters (a longer word has a line of its own).
std::vector<std::string> wrap(std::string_view text, size_t width) {
  std::vector<std::string> lines(1);
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string_view word = text.substr(at, end - at);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width)
      lines.emplace_back();
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += word;
    at = end + 1;
  }
  return lines;
}

// The arguments as the class's configure() reads them (Args::describe()), man-page style.
void print_arguments(const ElementClassInfo& info) {
  const std::unique_ptr<Element> element = info.create();
  Args args = Args::describe(info.traits->class_name);
  static_cast<void>(element->configure(args));
  if (args.docs().empty()) {
    std::printf("\nArguments: none.\n");
    return;
  }
  std::printf("\nArguments (what configure reads; a keyword argument is written \"KEY value\"):\n");
  constexpr size_t kIndent = 6;
  for (const ArgDoc& d : args.docs()) {
    const std::string_view type = std::string_view(d.type).substr(0, d.type.find(" ("));
    std::string head = d.name + "  ";
    if (d.kind == ArgDoc::Kind::kKeyword) {
      head += std::string(type);
    } else {
      head += d.kind == ArgDoc::Kind::kRest ? "positional, repeated" : "positional";
      if (d.kind == ArgDoc::Kind::kPositional) head += ", " + std::string(type);
    }
    if (d.required) {
      head += ", required";
    } else if (d.kind != ArgDoc::Kind::kRest) {
      head += ", default " + d.default_value;
    }
    std::printf("  %s\n", head.c_str());
    for (const std::string& line : wrap(d.help, kLineWidth - kIndent))
      std::printf("%*s%s\n", static_cast<int>(kIndent), "", line.c_str());
  }
}

}  // namespace

int cmd_elements(const std::vector<std::string>& args) {
  const Registry& reg = Registry::instance();
  if (args.empty()) {
    for (const auto& [name, info] : reg.all()) {
      // The first sentence of the manual's first paragraph, however many lines it spans.
      const std::string_view doc = element_doc(name);
      std::string summary(doc.substr(0, doc.find("\n\n")));
      std::replace(summary.begin(), summary.end(), '\n', ' ');
      if (const size_t dash = summary.find(" — "); dash != std::string::npos)
        summary.erase(0, dash + std::string_view(" — ").size());
      if (const size_t stop = summary.find(". "); stop != std::string::npos)
        summary.resize(stop + 1);
      std::printf("%-18s %s\n", name.c_str(), summary.c_str());
    }
    return 0;
  }
  const ElementClassInfo* info = reg.find(args[0]);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, i] : reg.all()) names.emplace_back(name);
    std::fprintf(stderr,
                 "fulcrum elements: no element class '%s'%s (run `fulcrum elements` for the "
                 "list)\n",
                 args[0].c_str(), did_you_mean(args[0], names).c_str());
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
  const char* reads = t.reads == PacketReads::kWholeFrame        ? "the whole frame"
                      : t.reads == PacketReads::kWholeFrameAhead ? "the whole frame, ahead"
                                                                 : "headers";
  static constexpr const char* kAnnoUse[] = {"", " Annotation line: read.",
                                             " Annotation line: written.",
                                             " Annotation line: read and written."};
  std::printf(" Reads: %s.%s\n", reads, kAnnoUse[t.anno & (kAnnoReads | kAnnoWrites)]);
  print_arguments(*info);
  return 0;
}

}  // namespace fulcrum::cli
