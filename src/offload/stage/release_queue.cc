#include "offload/stage/release_queue.hh"

namespace fulcrum::offload {

HeldTask& ReleaseQueue::open() {
  HeldTask* h;
  if (spare_.empty()) {
    owned_.push_back(std::make_unique<HeldTask>());
    h = owned_.back().get();
  } else {
    h = spare_.back();
    spare_.pop_back();
  }
  h->pkts.clear();
  h->buckets.clear();
  h->src.clear();
  h->verdicts.clear();
  h->stage_verdicts.clear();
  h->task = nullptr;
  h->emitted = 0;
  h->bytes = 0;
  h->submitted_ns = 0;
  h->completed = false;
  h->done = false;
  h->chained = false;
  h->on_cpu = false;
  fifo_.push_back(h);
  return *h;
}

void ReleaseQueue::pop() {
  spare_.push_back(fifo_.front());
  fifo_.pop_front();
}

}  // namespace fulcrum::offload
