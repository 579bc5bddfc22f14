// EspCryptoElement<Derived>: what IPsecAES and IPsecAuthHMACSHA1 share: the SA_FILE argument,
// the SA table shared by every worker, a multi-buffer crypto manager per replica, and their
// drop reasons.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum {

template <class Derived>
class EspCryptoElement : public ElementBase<Derived> {
 public:
  static constexpr DropReasons kDropReasons{"no-sa", "truncated", "crypto-error"};

  Status configure(Args& args) override {
    loc_ = args.loc();
    return args.positional_file("SA_FILE", file_, kSaFileHelp).finish();
  }

  Status initialize(const InitContext& ctx) override {
    const std::string where =
        loc_.str() + ": " + this->name() + " :: " + std::string(Derived::kTraits.class_name) + ": ";
    auto t = get_sa_slot(ctx.shared, file_, where);
    if (!t) return make_error(t.error());
    slot_ = t.value();
    worker_ = ctx.worker;
    table_ = slot_->current();
    auto c = MbCrypto::create();
    if (!c) return make_error(where + c.error());
    crypto_ = std::move(c.value());
    return {};
  }

  TableSlotBase* table_slot() override { return slot_.get(); }

 protected:
  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<SaTable>> slot_;
  // The table of this worker's loop iteration (TableSlot::for_worker), set per batch.
  const SaTable* table_ = nullptr;
  int worker_ = 0;
  std::unique_ptr<MbCrypto> crypto_;
};

}  // namespace fulcrum
