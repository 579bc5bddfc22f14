// The OpenCL kernel sources (kernels/*.cl, their #include "..." of kernels/common inlined),
// embedded into the binary at build time by kernels/embed_opencl.cmake, so the binary needs no
// kernel files at run time.
#pragma once

#include <cstddef>

namespace fulcrum::offload {

struct EmbeddedKernelSource {
  const char* file;  // the file name, for build logs
  const char* text;
};

extern const EmbeddedKernelSource kOpenCLSources[];
extern const size_t kOpenCLSourceCount;

}  // namespace fulcrum::offload
