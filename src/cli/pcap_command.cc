// fulcrum pcap OUT.pcap [GEN_SPEC] [--packets N]: the built-in generator's frames as a capture,
// for replaying through net_pcap (README step 4) or reading with tshark.
#include <pcap/pcap.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hh"
#include "core/args.hh"
#include "core/text_file.hh"
#include "io/eal.hh"
#include "io/port.hh"

namespace fulcrum::cli {
namespace {

constexpr const char* kPcapUsage =
    R"(usage: fulcrum pcap OUT.pcap [gen:KEY=VAL,...] [--packets N]

  Writes N frames (1000; 0 writes an empty capture) of the built-in generator to OUT.pcap
  (Ethernet, microsecond timestamps 1 us apart). The generator spec is the one --port takes
  (gen:size=64,flows=1024,dst=routes,routes=FILE,proto=ipv6,seed=N; default gen:size=64).
)";

constexpr uint64_t kMaxPackets = 100'000'000;
constexpr int kSnapLen = 65535;

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum pcap: %s\n\n%s", msg.c_str(), kPcapUsage);
  return 2;
}

}  // namespace

int cmd_pcap(const std::vector<std::string>& args) {
  std::string out, spec = "gen:size=64";
  uint64_t packets = 1000;
  bool spec_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kPcapUsage, stdout);
      return 0;
    } else if (a == "--packets") {
      int64_t n = 0;
      if (i + 1 >= args.size() || !parse_value(args[++i], n) || n < 0 ||
          static_cast<uint64_t>(n) > kMaxPackets)
        return usage_error("--packets needs an integer 0.." + std::to_string(kMaxPackets));
      packets = static_cast<uint64_t>(n);
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (out.empty()) {
      out = a;
    } else if (!spec_given && (a == "gen" || a.rfind("gen:", 0) == 0)) {
      spec = a;
      spec_given = true;
    } else {
      return usage_error("unexpected argument '" + a + "'");
    }
  }
  if (out.empty()) return usage_error("no output file given");
  if (Status s = check_port_spec(spec); !s) {
    std::fprintf(stderr, "fulcrum pcap: %s\n", s.error().c_str());
    return 1;
  }
  if (Status s = check_output_file(out, "capture file"); !s) {
    std::fprintf(stderr, "fulcrum pcap: %s\n", s.error().c_str());
    return 1;
  }
  EalOptions eal;
  if (Status s = init_eal(eal); !s) {
    std::fprintf(stderr, "fulcrum pcap: %s\n", s.error().c_str());
    return 1;
  }
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port(spec, pc);
  if (!port) {
    std::fprintf(stderr, "fulcrum pcap: %s\n", port.error().c_str());
    return 1;
  }
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> handle(
      pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_MICRO),
      &pcap_close);
  std::unique_ptr<pcap_dumper_t, void (*)(pcap_dumper_t*)> dump(
      pcap_dump_open(handle.get(), out.c_str()), &pcap_dump_close);
  if (!dump) {
    std::fprintf(stderr, "fulcrum pcap: cannot write capture file %s: %s\n", out.c_str(),
                 pcap_geterr(handle.get()));
    return 1;
  }
  constexpr uint16_t kBurst = 32;
  Packet* burst[kBurst];
  uint64_t written = 0;
  while (written < packets) {
    const auto want = static_cast<uint16_t>(std::min<uint64_t>(kBurst, packets - written));
    const uint16_t n = port.value()->rx_burst(0, burst, want);
    for (uint16_t k = 0; k < n; ++k) {
      pcap_pkthdr hdr{};
      hdr.ts.tv_sec = static_cast<time_t>(written / 1'000'000);
      hdr.ts.tv_usec = static_cast<suseconds_t>(written % 1'000'000);
      hdr.caplen = hdr.len = rte_pktmbuf_data_len(burst[k]);
      pcap_dump(reinterpret_cast<u_char*>(dump.get()), &hdr,
                rte_pktmbuf_mtod(burst[k], const u_char*));
      rte_pktmbuf_free(burst[k]);
      ++written;
    }
  }
  if (pcap_dump_flush(dump.get()) != 0) {
    std::fprintf(stderr, "fulcrum pcap: cannot write capture file %s\n", out.c_str());
    return 1;
  }
  std::printf("%s: %llu frames from %s\n", out.c_str(), static_cast<unsigned long long>(written),
              spec.c_str());
  return 0;
}

}  // namespace fulcrum::cli
