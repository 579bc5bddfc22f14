// RouteLookupOffload<Derived, Cpu, Tables>: what IPLookupOffload and IP6LookupOffload share. The
// CPU function is the Cpu lookup element (IPLookup, IP6Lookup) configured with the same FILE and
// sharing its table; the read datablock is the destination address as Cpu::destination() reads
// it; the write datablock is a 16-bit next hop, applied as the Cpu element applies it. Derived
// provides kTraits, kOffload (spec(kernel, read bytes)), kNoRoute, kMaxNextHop, kDeviceKey
// (shared storage key prefix of the device tables) and `Result<const HostTable*> host_table()
// const`; Tables has `upload(Device&, const HostTable&)` and `args()`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/shared_storage.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

template <class Derived, class Cpu, class Tables>
class RouteLookupOffload : public OffloadElement<Derived> {
 public:
  // The offload spec of a route lookup: `read_bytes` of destination address in, a next hop out.
  static constexpr offload::OffloadSpec spec(std::string_view kernel, uint32_t read_bytes) {
    return offload::OffloadSpec::items(kernel, read_bytes, sizeof(uint16_t));
  }

  Status configure(Args& args) override {
    std::string file;
    args.positional_file("FILE", file, Cpu::kFileHelp);
    if (Status s = this->configure_offload(args); !s) return s;
    Args cpu_args({file}, args.loc(), this->name(), Derived::kTraits.class_name);
    return cpu_.configure(cpu_args);
  }

  Status initialize(const InitContext& ctx) override {
    cpu_.set_name(this->name());
    if (Status s = cpu_.initialize(ctx); !s) return s;
    ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Derived::kMaxNextHop} + 1));
    return this->initialize_offload(ctx);
  }

  void process_cpu(PacketBatch& batch) override { cpu_.process_batch(batch); }

  bool gather(Packet* p, uint8_t* item, offload::PacketRegion&) override {
    typename Cpu::Addr addr;
    if (!Cpu::destination(p, addr)) return false;  // the CPU function drops it
    std::memcpy(item, &addr, sizeof addr);
    return true;
  }

  Verdict apply(Packet* p, const uint8_t* result, const offload::PacketRegion&) override {
    uint16_t hop;
    std::memcpy(&hop, result, sizeof hop);
    if (hop < ports_) {
      set_out_port(p, hop);
      return Verdict::out(0);
    }
    return Verdict::drop(hop == Derived::kNoRoute ? Cpu::kDropReasons["no-route"]
                                                  : Cpu::kDropReasons["no-such-port"]);
  }

  // The kernel's arguments on `device`, its tables uploaded once per process and device.
  Result<std::vector<offload::TaskArg>> device_args(const InitContext& ctx,
                                                    size_t device) override {
    auto host = static_cast<const Derived&>(*this).host_table();
    if (!host) return make_error(host.error());
    offload::Device& dev = this->service().device(device);
    const std::string key = std::string(Derived::kDeviceKey) + dev.label() + ":" + cpu_.file();
    Result<std::shared_ptr<const Tables>> tables =
        shared_or_own<Tables>(ctx.shared, key, [&]() -> Result<std::shared_ptr<Tables>> {
          auto t = Tables::upload(dev, *host.value());
          if (!t) return make_error(t.error());
          return std::shared_ptr<Tables>(std::move(t.value()));
        });
    if (!tables) return make_error(tables.error());
    return tables.value()->args();
  }

 protected:
  Cpu cpu_;

 private:
  uint16_t ports_ = 0;
};

}  // namespace fulcrum
