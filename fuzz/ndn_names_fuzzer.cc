// Fuzz target: the NDN name file ("/a/b PORT" lines) and the name table (src/lib/name_table.*).
//
// The file is parsed by NDNLookup's loader, which takes only a path (elements/ndn/ndn_lookup.cc),
// so the input is written to a scratch file private to this process and the element initialised
// on it. The URIs of the input's lines also go straight into a NameTable. Checked: after build(),
// a lookup of every added name returns the port it was added with last (same wire name).
//
// Input: a name file's text.
#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "core/args.hh"
#include "core/registry.hh"
#include "fuzz_support.hh"
#include "lib/name_table.hh"
#include "lib/ndn_wire.hh"

namespace {

using namespace fulcrum;

constexpr int kPorts = 4;

void through_element(std::string_view text) {
  const std::string& path = fuzz::scratch_path("names.txt");
  fuzz::write_scratch(path, text);
  const ElementClassInfo* info = Registry::instance().find("NDNLookup");
  FUZZ_CHECK(info != nullptr, "NDNLookup is not registered");
  std::unique_ptr<Element> e = info->create();
  e->set_name("names");
  Args args({path}, SourceLoc{"fuzz.click", 1, 1}, "names", "NDNLookup");
  FUZZ_CHECK(e->configure(args).ok(), "NDNLookup(FILE) rejected");
  for (int p = 0; p < e->noutputs(); ++p) e->set_output_connected(p);
  InitContext ctx;
  ctx.ports = kPorts;
  (void)e->initialize(ctx);
}

void through_table(std::string_view text) {
  NameTable table;
  std::map<std::string, uint16_t> last;  // wire name -> port
  uint16_t port = 0;
  for (const std::string& line : fuzz::split(text, '\n')) {
    std::istringstream fields(line);
    std::string uri;
    if (!(fields >> uri)) continue;
    ++port;
    if (!table.add(uri, port).ok()) continue;
    std::optional<std::vector<std::string>> comps = ndn::parse_uri(uri);
    FUZZ_CHECK(comps.has_value(), "add() took a URI parse_uri rejects: " + uri);
    last[ndn::encode_components(*comps)] = port;
  }
  if (!table.build().ok()) return;
  for (const std::string& line : fuzz::split(text, '\n')) {
    std::istringstream fields(line);
    std::string uri;
    if (!(fields >> uri)) continue;
    std::optional<std::vector<std::string>> comps = ndn::parse_uri(uri);
    if (!comps || comps->size() > NameTable::kMaxComponents) continue;
    auto it = last.find(ndn::encode_components(*comps));
    if (it == last.end()) continue;
    FUZZ_CHECK(table.lookup(uri) == it->second, uri + ": lookup " +
                                                    std::to_string(table.lookup(uri)) +
                                                    ", added with " + std::to_string(it->second));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  through_element(text);
  through_table(text);
  return 0;
}
