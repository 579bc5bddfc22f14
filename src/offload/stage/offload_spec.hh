// What an offloadable element declares, and the contract it satisfies (NBA §3.3, Table 2).
//
// An element states what it offloads as data, an OffloadSpec: its kernel, its per-packet read
// and write datablocks (fixed-size items gather() writes and results apply() reads) and,
// optionally, a whole-packet region datablock with a name. It implements the Offloadable hooks
// the framework's OffloadStage calls, and derives from OffloadElement<Self>
// (offload/offload_element.hh), which checks OffloadableElement at compile time:
//
//   class MyOffload final : public OffloadElement<MyOffload> {
//    public:
//     static constexpr auto kOffload = offload::OffloadSpec::items("my_kernel", 4, 2);
//     void process_cpu(PacketBatch&) override;            // the CPU function
//     bool gather(Packet*, uint8_t* item, offload::PacketRegion&) override;
//     Verdict apply(Packet*, const uint8_t* result, const offload::PacketRegion&) override;
//     Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t) override;
//   };
//
// Consecutive offloadable elements whose region datablocks have the same name are chained by a
// pass over the graph (offload/stage/chaining.cc): the first one's tasks carry the others'
// items and results and run their kernels on the same device buffers.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/batch.hh"
#include "core/element.hh"
#include "core/result.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

struct OffloadSpec {
  std::string_view kernel;   // the kernel's name (kernels/), built on every device at init
  uint32_t read_bytes = 0;   // read datablock: the item gather() writes per packet (0: none)
  uint32_t write_bytes = 0;  // write datablock: the result apply() reads per packet (0: none)
  // Whole-packet datablock (whole_pkt): a region of each packet's bytes goes to the device.
  bool whole_packet = false;
  WholePacketBlock region{};  // alignment, largest region, whether the kernel rewrites it
  // The region datablock's name: elements naming the same region one after the other chain
  // (empty: this element never chains).
  std::string_view region_name;

  // Fixed items only: `read` bytes in and `write` bytes out per packet.
  static constexpr OffloadSpec items(std::string_view kernel, uint32_t read, uint32_t write) {
    OffloadSpec s;
    s.kernel = kernel;
    s.read_bytes = read;
    s.write_bytes = write;
    return s;
  }
  // Fixed items and a whole-packet region, chained with the elements naming the same region.
  static constexpr OffloadSpec with_region(std::string_view kernel, uint32_t read, uint32_t write,
                                           WholePacketBlock region,
                                           std::string_view region_name = {}) {
    OffloadSpec s = items(kernel, read, write);
    s.whole_packet = true;
    s.region = region;
    s.region_name = region_name;
    return s;
  }
};

// What a spec must satisfy; checked at compile time by OffloadableElement.
consteval bool valid_spec(const OffloadSpec& s) {
  if (s.kernel.empty()) return false;
  if (!s.whole_packet) return s.region_name.empty();
  return s.region.align != 0 && (s.region.align & (s.region.align - 1)) == 0 &&
         s.region.max_bytes != 0;
}

// The hooks the stage calls on its element. Pure hooks are the contract; the optional ones are
// virtual with a default, so a misspelt override is a compile error, not a feature silently off.
class Offloadable {
 public:
  virtual ~Offloadable() = default;
  // The CPU function, on the batch's live packets.
  virtual void process_cpu(PacketBatch& batch) = 0;
  // Writes the packet's read item and, with a whole-packet datablock, names its region within
  // the packet. False: not for the device (the packet stays for the CPU function).
  virtual bool gather(Packet* p, uint8_t* item, PacketRegion& region) = 0;
  // Post-processing from the write item, after the region was copied back.
  virtual Verdict apply(Packet* p, const uint8_t* result, const PacketRegion& region) = 0;
  // The kernel's arguments on `device` (tables resident there, uploaded once per process); the
  // task's buffers are kItemsInput, kBytesInput, kRegionsInput and kResultsOutput.
  virtual Result<std::vector<TaskArg>> device_args(const InitContext& ctx, size_t device) = 0;

  // Optional: the region comes back grown (gather asks for PacketRegion::grow).
  virtual bool grows() const { return false; }
  // Optional: one kernel for this element and the chained `next` (FlowShader §III-E).
  virtual std::optional<TaskLaunch> fuse(const Element& next,
                                         const std::vector<TaskArg>& next_args) {
    (void)next, (void)next_args;
    return std::nullopt;
  }
};

template <class E>
concept OffloadableElement = std::derived_from<E, Element> && std::derived_from<E, Offloadable> &&
    std::is_final_v<E> && requires {
  { E::kOffload } -> std::convertible_to<OffloadSpec>;
} && valid_spec(E::kOffload);

}  // namespace fulcrum::offload
