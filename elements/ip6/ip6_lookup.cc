#include "elements/ip6/ip6_lookup.hh"

#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

template <class Table>
Result<std::shared_ptr<Ip6Routes>> build(const std::string& file,
                                         const std::vector<Route6>& routes) {
  auto table = std::make_unique<Table>();
  for (const Route6& r : routes) {
    Status s = table->add(r.prefix.data(), r.len, r.port);
    if (!s) return make_error(file + ": " + s.error());
  }
  Status s = table->build();
  if (!s) return make_error(file + ": " + s.error());
  return std::make_shared<Ip6Routes>(std::move(table));
}

}  // namespace

Status IP6Lookup::configure_keys(Args& args) {
  args.key("ALGORITHM", algorithm_,
           "trie (multibit trie) or bsearch (binary search on prefix lengths, Waldvogel)");
  if (algorithm_ != kTrie && algorithm_ != kBsearch)
    return args.error("ALGORITHM: expected trie or bsearch, got '" + algorithm_ + "'");
  return {};
}

Result<std::shared_ptr<Ip6Routes>> IP6Lookup::build_table(const std::string& file,
                                                          uint32_t max_port,
                                                          const std::string& algorithm) {
  Result<std::vector<Route6>> routes = load_routes6(file, max_port);
  if (!routes) return make_error(routes.error());
  if (algorithm == kTrie) return build<Ip6Trie>(file, *routes);
  return build<Ip6Table>(file, *routes);
}

}  // namespace fulcrum
