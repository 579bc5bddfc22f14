// Packet hashing benchmark (issue 3 item 6, thesis §3.2 "MD5 hashing"): the MD5Digest pipeline
// and the RedundancyElim pipeline (64-byte fixed chunks) from the generator at 64, 1024 and
// 1500 B, next to ceilings measured in the same run over buffers of the same payload sizes:
//   * OpenSSL, one packet payload at a time, three ways: MD5_Init/Update/Final (what the
//     elements call), the MD5() one-shot, and EVP with a kept context and a pre-fetched MD5
//     (EVP_DigestInit_ex2/Update/Final); MD5Digest's ceiling is the fastest of the three,
//   * OpenSSL MD5_Init/Update/Final once per 64-byte chunk of the payload (RedundancyElim's
//     ceiling: the hashing alone, without table, store and pipeline).
// The generator's payload bytes are the same in every frame, so every RedundancyElim chunk
// after the first frames is redundant and verified against the store (its slowest path).
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/re/md5.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 1024, 1500};
constexpr uint32_t kHeaders = 42;  // Ethernet + IPv4 + UDP of the generator's frames
constexpr uint32_t kChunk = 64;
constexpr uint32_t kFlows = 1024;
constexpr double kBitsPerByte = 8;
constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;
const char* const kNullTxOnly = "net_null1,no-rx=1";

uint8_t g_sink = 0;

struct Ceiling {
  double md5_mpps = 0;      // MD5_Init/Update/Final
  double oneshot_mpps = 0;  // MD5()
  double evp_mpps = 0;
  double chunks_mpps = 0;
  // The same three per CPU second of the measuring thread.
  double md5_cpu = 0, oneshot_cpu = 0, evp_cpu = 0;
  double best() const { return std::max({md5_mpps, oneshot_mpps, evp_mpps}); }
  double best_cpu() const { return std::max({md5_cpu, oneshot_cpu, evp_cpu}); }
};

// The MD5() one-shot (deprecated in OpenSSL 3, measured for comparison).
void md5_oneshot(const uint8_t* data, size_t len, uint8_t* out) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  MD5(data, len, out);
#pragma GCC diagnostic pop
}

Ceiling openssl_ceiling(uint32_t frame, double seconds) {
  Ceiling c;
  const uint32_t payload = frame - kHeaders;
  std::vector<uint8_t> buf(payload, 0);
  re::Md5Digest d{};
  Rates r = rates(seconds / 4, [&] {
    d = re::md5(buf.data(), payload);
    buf[0] = d.b[0];
  });
  c.md5_mpps = r.mpps, c.md5_cpu = r.cpu_mpps;
  r = rates(seconds / 4, [&] {
    md5_oneshot(buf.data(), payload, d.b);
    buf[0] = d.b[0];
  });
  c.oneshot_mpps = r.mpps, c.oneshot_cpu = r.cpu_mpps;
  std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md(EVP_MD_fetch(nullptr, "MD5", nullptr),
                                                     &EVP_MD_free);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (md && ctx) {
    r = rates(seconds / 4, [&] {
      unsigned int len = 0;
      EVP_DigestInit_ex2(ctx.get(), md.get(), nullptr);
      EVP_DigestUpdate(ctx.get(), buf.data(), payload);
      EVP_DigestFinal_ex(ctx.get(), d.b, &len);
      buf[0] = d.b[0];
    });
    c.evp_mpps = r.mpps, c.evp_cpu = r.cpu_mpps;
  }
  c.chunks_mpps = rate_mpps(seconds / 4, [&] {
    for (uint32_t off = 0; off + kChunk <= payload; off += kChunk) {
      d = re::md5(buf.data() + off, kChunk);
      g_sink ^= d.b[0];
    }
  });
  return c;
}

Measured median_run(const std::vector<Measured>& runs) {
  Measured m = runs[0];
  for (const Measured& x : runs) m.balanced &= x.balanced;
  m.mpps = median(runs, [](const Measured& x) { return x.mpps; });
  return m;
}

std::string bench_md5(const BenchContext& ctx) {
  const double s = ctx.seconds;
  const std::string digest = "FromInput -> MD5Digest -> ToOutput;";
  const std::string elim =
      "FromInput -> RedundancyElim(CHUNK " + std::to_string(kChunk) + ") -> ToOutput;";
  std::vector<std::string> rows;
  for (uint32_t size : kSizes) {
    const std::string gen =
        "gen:size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) + ",dst=uniform";
    // Pipelines and ceilings alternate, kRepeats times each, so that load from elsewhere on
    // this shared machine falls on both sides of the ratios; medians of each.
    std::vector<Measured> digests, elims;
    std::vector<Ceiling> ceilings;
    for (int r = 0; r < kRepeats; ++r) {
      digests.push_back(measure_once(digest, {gen, kNullTxOnly}, s / kRepeats, BranchMode::kReuse));
      elims.push_back(measure_once(elim, {gen, kNullTxOnly}, s / kRepeats, BranchMode::kReuse));
      ceilings.push_back(openssl_ceiling(size, s / kRepeats));
    }
    const Measured md = median_run(digests);
    const double md_cpu = median(digests, [](const Measured& x) { return x.cpu_mpps; });
    const Measured re = median_run(elims);
    Ceiling c;
    c.md5_mpps = median(ceilings, [](const Ceiling& x) { return x.md5_mpps; });
    c.oneshot_mpps = median(ceilings, [](const Ceiling& x) { return x.oneshot_mpps; });
    c.evp_mpps = median(ceilings, [](const Ceiling& x) { return x.evp_mpps; });
    c.chunks_mpps = median(ceilings, [](const Ceiling& x) { return x.chunks_mpps; });
    c.md5_cpu = median(ceilings, [](const Ceiling& x) { return x.md5_cpu; });
    c.oneshot_cpu = median(ceilings, [](const Ceiling& x) { return x.oneshot_cpu; });
    c.evp_cpu = median(ceilings, [](const Ceiling& x) { return x.evp_cpu; });
    const double cpu_ratio = c.best_cpu() > 0 ? md_cpu / c.best_cpu() : 0;
    const double to_gbps = kMega * size * kBitsPerByte / kGiga;
    const double ratio = c.best() > 0 ? md.mpps / c.best() : 0;
    const bool has_chunks = size - kHeaders >= kChunk;
    const double re_ratio = has_chunks && c.chunks_mpps > 0 ? re.mpps / c.chunks_mpps : 0;
    std::fprintf(stderr,
                 "bench: md5 %u B: MD5Digest %.2f Mpps %.2f Gbps; OpenSSL MD5_Init/Update/Final "
                 "%.2f, MD5() %.2f, EVP %.2f Mpps (ratio to the best %.2f); RedundancyElim %.2f "
                 "Mpps %.2f Gbps; MD5 per %u B chunk %.2f Mpps (ratio %.2f); per CPU second "
                 "MD5Digest %.2f vs OpenSSL's best %.2f Mpps (ratio %.2f)\n",
                 size, md.mpps, md.mpps * to_gbps, c.md5_mpps, c.oneshot_mpps, c.evp_mpps, ratio,
                 re.mpps, re.mpps * to_gbps, kChunk, has_chunks ? c.chunks_mpps : 0, re_ratio,
                 md_cpu, c.best_cpu(), cpu_ratio);
    rows.push_back(Obj()
                       .count("size", size)
                       .count("payload", size - kHeaders)
                       .num("mpps", md.mpps)
                       .num("gbps", md.mpps * to_gbps)
                       .raw("balanced", md.balanced && re.balanced ? "true" : "false")
                       .num("openssl_md5_lowlevel_mpps", c.md5_mpps)
                       .num("openssl_md5_oneshot_mpps", c.oneshot_mpps)
                       .num("openssl_evp_md5_mpps", c.evp_mpps)
                       .num("ratio_to_openssl_best", ratio)
                       .num("ratio_to_openssl_lowlevel", c.md5_mpps > 0 ? md.mpps / c.md5_mpps : 0)
                       .num("cpu_mpps", md_cpu)
                       .num("openssl_best_cpu_mpps", c.best_cpu())
                       .num("cpu_ratio_to_openssl_best", cpu_ratio)
                       .num("re_mpps", re.mpps)
                       .num("re_gbps", re.mpps * to_gbps)
                       .num("openssl_md5_chunks_mpps", has_chunks ? c.chunks_mpps : 0)
                       .num("re_ratio_to_openssl_md5_chunks", re_ratio)
                       .done());
  }
  return Obj()
      .str("what",
           "MD5Digest (MD5 of each UDP payload) and RedundancyElim (CHUNK 64, fixed) from gen "
           "dst=uniform, 1 worker; gbps counts input frame bytes. Ceilings in the same run over "
           "buffers of the payload size: OpenSSL one packet at a time (MD5_Init/Update/Final, "
           "MD5(), EVP; the ratio is to the fastest), and for RedundancyElim MD5_Init/Update/"
           "Final once per 64-byte chunk (payloads under 64 B have no chunk)")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(90, "md5", bench_md5);

}  // namespace fulcrum::bench
