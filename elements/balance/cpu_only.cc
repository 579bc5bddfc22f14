#include "elements/balance/cpu_only.hh"

#include "core/registry.hh"

namespace fulcrum {

FULCRUM_REGISTER_ELEMENT(CPUOnly);

}  // namespace fulcrum
