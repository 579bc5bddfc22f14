// L7Balancer: chooses the backend of each request (Verdict::backend) from named pools, by Host
// and path-prefix rules (as Azure Application Gateway's URL path maps, paper 004 §II), then by
// consistent hashing within the pool (hash_ring.hh), skipping backends the proxy's health checks
// marked down (l7/proxy/backends.hh). No backend up in the pool: the client gets 502.
//
// Arguments (configuration file, l7/config.hh):
//   POOL name A.B.C.D:PORT [A.B.C.D:PORT ...]   a pool; repeat for more (at least one)
//   RULE pool HOST PATH-PREFIX                  requests whose Host (port ignored, "*": any) and
//                                               target start match go to `pool`; repeatable,
//                                               the first match wins
//   DEFAULT pool                                pool when no rule matches (default: the first)
//   HASH flow|path|header:NAME                  the key hashed within the pool (default flow: a
//                                               client connection stays on one backend; a
//                                               missing header falls back to the flow)
//   VNODES n                                    ring points per backend (default 160)
// Responses pass untouched. Counters: requests per pool, 502s for pools with nothing up.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/args.hh"
#include "core/result.hh"
#include "l7/nf/hash_ring.hh"
#include "l7/nf/nf.hh"
#include "l7/proxy/backends.hh"

namespace fulcrum::l7 {

class L7Balancer final : public FlowNf {
 public:
  struct Pool {
    std::string name;
    std::vector<int> backends;  // BackendTable indices
    HashRing ring;
    uint64_t requests = 0;
    uint64_t unavailable = 0;
  };
  struct Rule {
    size_t pool = 0;
    std::string host;  // empty: any
    std::string path_prefix;
  };
  enum class Key : uint8_t { kFlow, kPath, kHeader };

  static Result<std::unique_ptr<FlowNf>> make(Args& a);
  // Configured from `a`, its backends added to `table`.
  static Result<std::unique_ptr<L7Balancer>> configure(Args& a, BackendTable& table);

  std::string_view name() const override { return "L7Balancer"; }
  void process(Message& m, std::span<uint8_t> state) override;

  // The pool a request head goes to (rules, then the default).
  size_t pool_for(const HttpHead& h) const;
  const std::vector<Pool>& pools() const { return pools_; }

 private:
  explicit L7Balancer(BackendTable& table) : table_(table) {}
  uint64_t key_of(const Message& m) const;

  BackendTable& table_;
  std::vector<Pool> pools_;
  std::vector<Rule> rules_;
  size_t default_pool_ = 0;
  Key key_ = Key::kFlow;
  std::string key_header_;
  uint32_t vnodes_ = 160;
};

}  // namespace fulcrum::l7
