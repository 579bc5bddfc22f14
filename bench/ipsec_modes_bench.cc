// IPsec modes benchmark (issue 15): the gateway with each cipher an SA can have, in one run,
// at 64, 512 and 1500 B, from the generator (one outbound SA for every destination):
//   * encapsulation: IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1, for AES-128-CTR + HMAC-SHA1,
//     AES-128-CBC + HMAC-SHA1 (IVs from the bulk IV source), AES-128-GCM and AES-256-GCM, and
//     AES-128-CTR + HMAC-SHA1 with ESN, and AES-128-CTR + HMAC-SHA1 with IPv6 inside and out
//     (6in6: gen proto=ipv6, an IPv6 tunnel and a ::/0 selector);
//   * decapsulation: the same pipeline followed by IPsecESPDecap (the generator makes clear
//     packets, and a replayed capture would be replayed packets to the receiver); the
//     decapsulation's own rate is derived from the two rates of the same run,
//     1 / (1/round_trip - 1/encap), and labelled as derived.
// The modes alternate, kRepeats times each, so load from elsewhere falls on all of them.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 512, 1500};
constexpr uint32_t kFlows = 1024;
const char* const kNullTxOnly = "net_null1,no-rx=1";
const char* const kKey128 = "2b7e151628aed2a6abf7158809cf4f3c";
const char* const kKey256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const char* const kSalt = "deadbeef";
const char* const kAuth = "0102030405060708090a0b0c0d0e0f1011121314";

struct Mode {
  const char* name;
  std::string material, auth, options;
  bool six = false;  // IPv6 inner packets and tunnel
};

std::vector<Mode> modes() {
  const std::string k128 = kKey128, k256 = kKey256, salt = kSalt;
  return {
      {"aes128-ctr+hmac-sha1", k128 + salt, kAuth, ""},
      {"aes128-cbc+hmac-sha1", k128, kAuth, ""},
      {"aes128-gcm", k128 + salt, "-", "CIPHER aes-gcm"},
      {"aes256-gcm", k256 + salt, "-", "CIPHER aes-gcm"},
      {"aes128-ctr+hmac-sha1 esn", k128 + salt, kAuth, "ESN on"},
      {"aes128-ctr+hmac-sha1 6in6", k128 + salt, kAuth, "", true},
  };
}

// An SA file with the mode's SA both ways (SPI 4096, every destination of its family).
std::string write_sa_file(const BenchContext& ctx, const Mode& m, size_t index) {
  const std::string path = ctx.dir + "/ipsec-modes-" + std::to_string(index) + ".txt";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return {};
  const std::string tunnel = m.six ? "2001:db8::1 2001:db8::2 " : "192.0.2.1 198.51.100.1 ";
  const std::string head = "4096 " + tunnel + m.material + " " + m.auth + " ";
  const char* any = m.six ? "::/0" : "0.0.0.0/0";
  std::fprintf(f, "%s%s DIR out %s\n%s%s DIR in %s\n", head.c_str(), any, m.options.c_str(),
               head.c_str(), any, m.options.c_str());
  std::fclose(f);
  return path;
}

std::string bench_ipsec_modes(const BenchContext& ctx) {
  const double s = ctx.seconds;
  const std::vector<Mode> ms = modes();
  std::vector<std::string> encap, round_trip;
  for (size_t i = 0; i < ms.size(); ++i) {
    const std::string file = write_sa_file(ctx, ms[i], i);
    if (file.empty()) return "null";
    const std::string q = "\"" + file + "\"";
    const std::string enc = "FromInput -> IPsecESPEncap(" + q + ") -> IPsecAES(" + q +
                            ") -> IPsecAuthHMACSHA1(" + q + ")";
    encap.push_back(enc + " -> ToOutput;");
    round_trip.push_back(enc + " -> IPsecESPDecap(" + q + ") -> ToOutput;");
  }
  std::vector<std::string> rows;
  for (uint32_t size : kSizes) {
    const std::string gen4 =
        "gen:size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) + ",dst=uniform";
    const std::string gen6 = gen4 + ",proto=ipv6";
    std::vector<std::vector<double>> enc(ms.size()), rt(ms.size());
    bool balanced = true;
    for (int r = 0; r < kRepeats; ++r) {
      for (size_t i = 0; i < ms.size(); ++i) {
        const double per = s / kRepeats;
        const std::string& gen = ms[i].six ? gen6 : gen4;
        const Measured e = measure_once(encap[i], {gen, kNullTxOnly}, per, BranchMode::kReuse);
        const Measured t = measure_once(round_trip[i], {gen, kNullTxOnly}, per, BranchMode::kReuse);
        enc[i].push_back(e.mpps);
        rt[i].push_back(t.mpps);
        balanced &= e.balanced && t.balanced;
      }
    }
    std::vector<std::string> points;
    const double base = median(enc[0]);
    for (size_t i = 0; i < ms.size(); ++i) {
      const double e = median(enc[i]), t = median(rt[i]);
      const double decap = (e > 0 && t > 0 && t < e) ? 1 / (1 / t - 1 / e) : 0;
      std::fprintf(stderr,
                   "bench: ipsec_modes %u B %-26s encap %.3f Mpps (%.2fx CTR+HMAC), encap+decap "
                   "%.3f Mpps, decap alone (derived) %.3f Mpps\n",
                   size, ms[i].name, e, base > 0 ? e / base : 0, t, decap);
      points.push_back(Obj()
                           .str("mode", ms[i].name)
                           .num("encap_mpps", e)
                           .num("encap_ratio_to_ctr_hmac", base > 0 ? e / base : 0)
                           .num("encap_decap_mpps", t)
                           .num("decap_derived_mpps", decap)
                           .done());
    }
    rows.push_back(Obj()
                       .count("size", size)
                       .raw("balanced", balanced ? "true" : "false")
                       .raw("modes", array(points, "\n        "))
                       .done());
  }
  return Obj()
      .str("what",
           "IPsec gateway per SA mode, 1 worker, gen dst=uniform (proto=ipv6 for 6in6) -> "
           "net_null: encap = "
           "IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1; encap_decap = the same -> "
           "IPsecESPDecap; decap_derived = 1/(1/encap_decap - 1/encap), not measured alone. "
           "Medians of 3 alternating runs per mode")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(81, "ipsec_modes", bench_ipsec_modes);

}  // namespace fulcrum::bench
