// The CUDA build of kernels/ids_ac_scan.cl: its kernels, registered by name with their parameter
// signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/ids_ac_scan.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kIdsAcScanRegistration{
    {"ids_ac_scan", "bbbbbu", reinterpret_cast<const void*>(&ids_ac_scan)}};

}  // namespace
