// Element: the unit of packet processing. An element processes a whole batch and records each
// packet's next output (or a drop with a named reason) in the batch; the graph splits and
// forwards. Per-packet elements are written as one small function through PacketElement<T>.
//
// Every element class carries compile-time traits (ElementTraits): class name, port counts, drop
// reasons and how much of a packet it reads. ElementClass<T> checks them;
// FULCRUM_REGISTER_ELEMENT(T) adds T to the registry.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/args.hh"
#include "core/batch.hh"
#include "core/drop_reasons.hh"
#include "core/output_loss.hh"
#include "core/packet_reads.hh"
#include "core/result.hh"

namespace fulcrum {
namespace offload {
class OffloadStage;
}

class SharedStorage;
class TableSlotBase;

// Output count chosen by the configuration (e.g. Classifier: one output per pattern).
inline constexpr int kConfiguredOutputs = -1;
inline constexpr int kMaxOutputs = 64;

struct ElementTraits {
  std::string_view class_name;
  int inputs;   // 0 for sources
  int outputs;  // or kConfiguredOutputs
  std::span<const std::string_view> drop_reasons;
  // Outputs (bit N: output N) the element may be left without: it then handles those packets
  // itself (drops them with a reason of its own, as Click's "1/1-2" elements do), so
  // `fulcrum check` does not report them unconnected.
  uint64_t optional_outputs = 0;
  PacketReads reads = PacketReads::kHeaders;
  uint8_t anno = 0;  // kAnnoReads | kAnnoWrites: its use of the private annotation line
};

// Where ToOutput hands packets: the worker's transmit path. transmit() takes every live packet
// of the batch (excluding it), queues it for effective_out_port(p), and counts what it cannot
// send as a drop with a reason of its own.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void transmit(PacketBatch& batch) = 0;
};

// What an element may look at while it initializes: its place in the runtime.
struct InitContext {
  int worker = 0;
  int workers = 1;
  // Number of --port entries; 0 when not known (`fulcrum check` without --ports): port numbers in
  // arguments and tables are then not checked against it.
  int ports = 0;
  uint32_t batch = kDefaultBatch;  // RX burst size: a batch this full arrived from a backlog
  SharedStorage* shared = nullptr;
  PacketSink* sink = nullptr;   // the worker's transmit path
  rte_mempool* pool = nullptr;  // the worker's packet pool (for sources)
  // IDS rule files: refuse the whole file for one rule that does not load (--strict-rules),
  // instead of skipping and counting such rules.
  bool strict_rules = false;
  // Where an element leaves what the user should know about how it loaded ("ids: 212 of 2046
  // rules skipped: ..."); printed by run and check. May be null.
  std::vector<std::string>* notes = nullptr;
};

struct Counter {
  std::string name;
  uint64_t value;
  // One value every worker replica reports alike (a shared balancer's fraction): the report
  // takes it once instead of adding the replicas' values.
  bool shared = false;
};

class Element {
 public:
  virtual ~Element() = default;

  virtual const ElementTraits& traits() const = 0;
  // Reads the configuration arguments. Errors are reported with the element's location.
  virtual Status configure(Args& args) = 0;
  // Called once per worker replica after all elements are configured.
  virtual Status initialize(const InitContext&) { return {}; }
  virtual void process_batch(PacketBatch& batch) = 0;
  // Element-specific counters beyond the per-port and drop counts the graph keeps.
  virtual void counters(std::vector<Counter>&) const {}
  // Output besides packets: finish() is called on the worker when the run ends, after the last
  // packet, to write out what is buffered; output_losses() then adds what could not be written
  // (the run reports it and exits with a failure status).
  virtual void finish() {}
  virtual void output_losses(std::vector<OutputLoss>&) const {}

  // Schedulable elements (sources, timers): the worker calls run_task when the timer given by
  // next_task_ns() expires; a task may fill `out` with new packets that enter at output 0.
  virtual bool schedulable() const { return false; }
  virtual uint64_t next_task_ns() const { return 0; }
  virtual void run_task(uint64_t now_ns, PacketBatch& out) { (void)now_ns, (void)out; }

  // Deferring elements (offload to a device): process_batch may take packets out of the batch
  // (excluding their slots) to finish them later. The worker calls poll_deferred in its loop;
  // the element fills `out` with finished packets, their verdicts set, and they leave by those
  // outputs as if process_batch had just returned them. held() counts packets taken and not yet
  // handed back: the worker polls at the end of a run until it is 0, so nothing is lost.
  // drain(): the input has ended (the run stops); an element holding packets in the hope of
  // more input (fragments waiting for the rest of their datagram) gives them up, so that held()
  // reaches 0 without waiting for its timeouts.
  virtual bool defers() const { return false; }
  virtual void drain() {}
  virtual void poll_deferred(uint64_t now_ns, PacketBatch& out) { (void)now_ns, (void)out; }
  virtual uint64_t held() const { return 0; }

  // The stage the framework runs for an offloadable element (offload/offload_element.hh);
  // nullptr for the others. Graph passes (the offload chaining pass) find offloadable elements
  // through it.
  virtual offload::OffloadStage* offload_stage() { return nullptr; }

  // The table the element reads that can be replaced while the run goes on (hot reload,
  // core/table_slot.hh): the same slot in every worker replica. nullptr: nothing to reload.
  virtual TableSlotBase* table_slot() { return nullptr; }

  int noutputs() const { return noutputs_; }
  // Whether output `port` leads somewhere; set by the graph before initialize(). Packets sent to
  // an unconnected output are dropped by the graph with reason "unconnected-output".
  bool output_connected(int port) const { return (connected_ >> port) & 1; }
  void set_output_connected(int port) { connected_ |= uint64_t{1} << port; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Whether output 0 leads straight to the transmit path (ToOutput); set by the graph. A
  // PacketElement then also learns the batch's TxSummary in its pass, sparing the transmit path
  // a pass of its own.
  bool feeds_sink() const { return feeds_sink_; }
  void set_feeds_sink(bool yes) { feeds_sink_ = yes; }

 protected:
  void set_noutputs(int n) { noutputs_ = n; }

 private:
  std::string name_;
  int noutputs_ = 0;
  uint64_t connected_ = 0;
  bool feeds_sink_ = false;
};

template <class T>
concept ElementClass = std::derived_from<T, Element> && std::default_initializable<T> && requires {
  { T::kTraits } -> std::convertible_to<const ElementTraits&>;
};

// CRTP base providing traits() and the static port-count initialisation.
template <class Derived>
class ElementBase : public Element {
 public:
  ElementBase() {
    if constexpr (requires { Derived::kTraits; }) {
      if (Derived::kTraits.outputs != kConfiguredOutputs) set_noutputs(Derived::kTraits.outputs);
    }
  }
  const ElementTraits& traits() const override { return Derived::kTraits; }
};

// Per-packet element: Derived implements `Verdict process(Packet*)` (inline, in the header).
template <class Derived>
class PacketElement : public ElementBase<Derived> {
 public:
  void process_batch(PacketBatch& batch) final {
    if (this->feeds_sink())
      run<true>(batch);
    else
      run<false>(batch);
  }

 private:
  // One pass over the batch; kToSink: it also learns the batch's TxSummary, each packet's share
  // after its process.
  template <bool kToSink>
  void run(PacketBatch& batch) {
    auto* self = static_cast<Derived*>(this);
    Verdict* results = batch.results();
    int16_t any = 0;  // the verdicts ORed: 0 when all are output 0
    TxSummary sum;
    batch.for_each([&](uint32_t i, Packet* p) {
      const Verdict v = self->process(p);
      results[i] = v;
      any |= v.v;
      if constexpr (kToSink) sum.add(p);
    });
    batch.note_first_output(any == 0);
    if constexpr (kToSink) batch.set_tx_summary(sum);
  }
};

}  // namespace fulcrum
