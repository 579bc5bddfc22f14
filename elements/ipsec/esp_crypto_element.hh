// EspCryptoElement<Derived>: what IPsecAES and IPsecAuthHMACSHA1 share: the SA_FILE argument,
// the SA table shared by every worker, a multi-buffer crypto manager per replica, and their
// drop reasons.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
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
    auto t = get_sa_table(ctx.shared, file_, where);
    if (!t) return make_error(t.error());
    table_ = t.value();
    auto c = MbCrypto::create();
    if (!c) return make_error(where + c.error());
    crypto_ = std::move(c.value());
    return {};
  }

 protected:
  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<const SaTable> table_;
  std::unique_ptr<MbCrypto> crypto_;
};

}  // namespace fulcrum
