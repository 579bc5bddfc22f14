// EspOffloadElement<Derived, Cpu>: what IPsecAESOffload and IPsecAuthHMACSHA1Offload share. The
// CPU function is the Cpu element (IPsecAES, IPsecAuthHMACSHA1) configured with the same SA_FILE
// and sharing its SA table; the datablocks are the ESP region of the frame (whole packet, SPI
// through the ICV's room, rewritten in place) and the packet's SA index (4 bytes). Both
// name their region "esp-region", so IPsecAESOffload -> IPsecAuthHMACSHA1Offload run in one
// device task (src/offload/stage/chaining.cc). The device SA table (src/offload/ipsec_tables.hh)
// is uploaded to each device once per process and SA file.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/shared_storage.hh"
#include "lib/esp.hh"
#include "lib/ipsec_sa.hh"
#include "offload/ipsec_tables.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

template <class Derived, class Cpu>
class EspOffloadElement : public OffloadElement<Derived> {
 public:
  // The offload spec of an ESP element: the SA index in, `write_bytes` out, the ESP region
  // (named "esp-region", so consecutive ESP elements chain) rewritten in place.
  static constexpr offload::OffloadSpec spec(std::string_view kernel, uint32_t write_bytes) {
    return offload::OffloadSpec::with_region(
        kernel, offload::kIpsecItemBytes, write_bytes,
        {.write = true, .align = offload::kIpsecRegionAlign, .max_bytes = 2048}, "esp-region");
  }

  Status configure(Args& args) override {
    args.positional_file("SA_FILE", file_, kSaFileHelp);
    loc_ = args.loc();
    if (Status s = this->configure_offload(args); !s) return s;
    Args cpu_args({file_}, args.loc(), this->name(), Derived::kTraits.class_name);
    return cpu_.configure(cpu_args);
  }

  Status initialize(const InitContext& ctx) override {
    cpu_.set_name(this->name());
    if (Status s = cpu_.initialize(ctx); !s) return s;
    const std::string where =
        loc_.str() + ": " + this->name() + " :: " + std::string(Derived::kTraits.class_name) + ": ";
    auto t = get_sa_table(ctx.shared, file_, where);
    if (!t) return make_error(t.error());
    table_ = t.value();
    return this->initialize_offload(ctx);
  }

  void process_cpu(PacketBatch& batch) override { cpu_.process_batch(batch); }

  // Packets the CPU function would drop (no SA, truncated) stay with it, and so do the SAs the
  // kernels do not implement (SaConfig::device_aes, device_hmac: AES-CBC). The region is the ESP
  // part through the ICV's room (its length by the SA's cipher), which with ESN holds the
  // sequence number's high half until the ICV is written.
  bool gather(Packet* p, uint8_t* item, offload::PacketRegion& region) override {
    const SaConfig* cfg = sa_of(p);
    if (cfg == nullptr) return false;
    if (Derived::kCipherStage ? !cfg->device_aes() : !cfg->device_hmac()) return false;
    const uint32_t off = esp::esp_offset(p);
    if (off == 0 ||
        length(p) < off + esp::kHdrLen + cfg->iv_len() + esp::kTrailerLen + cfg->icv_len())
      return false;
    region = {off, length(p) - off};
    const uint32_t sa = anno(p).flow_id;
    std::memcpy(item, &sa, sizeof sa);
    return true;
  }

  // The kernel's arguments on `device`, the SA table uploaded once per process, device and file.
  Result<std::vector<offload::TaskArg>> device_args(const InitContext& ctx,
                                                    size_t device) override {
    offload::Device& dev = this->service().device(device);
    const std::string key = "ipsec-device-sa:" + dev.label() + ":" + file_;
    auto tables = shared_or_own<offload::IpsecTables>(
        ctx.shared, key, [&]() -> Result<std::shared_ptr<offload::IpsecTables>> {
          auto t = offload::IpsecTables::upload(dev, *table_);
          if (!t) return make_error(t.error());
          return std::shared_ptr<offload::IpsecTables>(std::move(t.value()));
        });
    if (!tables) return make_error(tables.error());
    device_tables_.push_back(tables.value());
    return Derived::kernel_args(*tables.value());
  }

  const std::string& file() const { return file_; }

 protected:
  // The packet's SA (flow_id, set by IPsecESPEncap), or nullptr when it names none.
  const SaConfig* sa_of(Packet* p) const {
    const uint32_t sa = anno(p).flow_id;
    return sa < table_->size() ? &table_->at(sa).cfg : nullptr;
  }

  Cpu cpu_;

 private:
  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<const SaTable> table_;
  std::vector<std::shared_ptr<const offload::IpsecTables>> device_tables_;
};

}  // namespace fulcrum
