// Fuzz target: the Click configuration lexer and parser (src/core/config/).
//
// Input: a pipeline file's text. It is parsed with the element registry's is_class predicate, as
// the runtime parses it (src/runtime/runtime.cc). Checked: a parsed configuration only names
// registered classes, its connections name existing elements and ports >= 0; an error is
// reported with the file's name in front ("fuzz.click:LINE:COL: ...").
#include <cstdint>
#include <string>

#include "core/config/ast.hh"
#include "core/registry.hh"
#include "fuzz_support.hh"

namespace {

constexpr const char* kFile = "fuzz.click";

bool is_class(std::string_view name) {
  return fulcrum::Registry::instance().find(name) != nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  Result<PipelineConfig> r = parse_pipeline(fuzz::as_text(data, size), kFile, is_class);
  if (!r.ok()) {
    FUZZ_CHECK(r.error().rfind(std::string(kFile) + ":", 0) == 0,
               "error without the file name: " + r.error());
    return 0;
  }
  const PipelineConfig& c = r.value();
  for (const ConfigElement& e : c.elements) {
    FUZZ_CHECK(is_class(e.class_name), "unknown class accepted: " + e.class_name);
    FUZZ_CHECK(!e.name.empty(), "an element without a name");
  }
  for (const ConfigConnection& k : c.connections) {
    FUZZ_CHECK(k.from < c.elements.size() && k.to < c.elements.size(),
               "connection to a missing element");
    FUZZ_CHECK(k.from_port >= 0 && k.to_port >= 0, "negative port");
  }
  return 0;
}
