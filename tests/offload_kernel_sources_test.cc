// The kernels are written once (kernels/*.cl, in the dialect of kernels/common/portable.h): the
// OpenCL build embeds each with its kernels/common headers inlined, the CUDA build includes it
// from a .cu file the build writes, and the host shares kernels/common's SA record and SHA-1.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "lib/ipsec_crypto.hh"
#include "offload/emu/emu_kernels.hh"
#include "offload/ipsec_tables.hh"

#if FULCRUM_HAVE_OPENCL
#include "offload/opencl/opencl_sources.hh"
#endif
#if FULCRUM_HAVE_CUDA
#include "offload/cuda/cuda_kernels.hh"
#endif

namespace fulcrum::offload {
namespace {

namespace fs = std::filesystem;

fs::path kernels_dir() {
  const char* src = std::getenv("FULCRUM_SOURCE_DIR");
  return fs::path(src != nullptr ? src : ".") / "kernels";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OffloadKernelSources, EveryKernelSourceIsEmbeddedWithItsIncludesInlined) {
#if FULCRUM_HAVE_OPENCL
  std::set<std::string> embedded;
  for (size_t i = 0; i < kOpenCLSourceCount; ++i) {
    embedded.insert(kOpenCLSources[i].file);
    const std::string text = kOpenCLSources[i].text;
    EXPECT_EQ(text.find("#include \""), std::string::npos) << kOpenCLSources[i].file;
    EXPECT_NE(text.find("FULCRUM_KERNELS_COMMON_PORTABLE_H"), std::string::npos)
        << kOpenCLSources[i].file << " does not carry kernels/common/portable.h";
  }
  std::set<std::string> sources;
  for (const fs::directory_entry& e : fs::directory_iterator(kernels_dir()))
    if (e.path().extension() == ".cl") sources.insert(e.path().filename().string());
  ASSERT_FALSE(sources.empty()) << kernels_dir();
  EXPECT_EQ(embedded, sources);
#else
  GTEST_SKIP() << "built without OpenCL";
#endif
}

// The signature of a kernel, read from its source text: 'b' per pointer parameter, 'u' per
// value (the build takes it from the function's type instead).
std::string signature_from_text(const std::string& params) {
  std::string sig;
  std::istringstream in(params);
  for (std::string p; std::getline(in, p, ',');)
    sig += p.find('*') != std::string::npos ? 'b' : 'u';
  return sig;
}

// Every entry point of every kernel source is registered under its name, with its signature,
// for the emulated device and (when built) the CUDA backend: nothing is registered by hand.
TEST(OffloadKernelSources, EveryEntryPointIsRegisteredWithItsSignature) {
  const std::regex entry(R"(KERNEL\s+void\s+([A-Za-z_]\w*)\s*\(([^)]*)\))");
  size_t kernels = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kernels_dir())) {
    if (e.path().extension() != ".cl") continue;
    const std::string text = read_text(e.path());
    for (std::sregex_iterator m(text.begin(), text.end(), entry), end; m != end; ++m) {
      ++kernels;
      const std::string name = (*m)[1];
      const std::string sig = signature_from_text((*m)[2]);
      const EmuKernelEntry* emu = find_emu_kernel(name);
      ASSERT_NE(emu, nullptr) << name << " (" << e.path().filename() << ")";
      EXPECT_EQ(std::string(emu->signature), sig) << name;
#if FULCRUM_HAVE_CUDA
      const CudaKernelEntry* cuda = find_cuda_kernel(name);
      ASSERT_NE(cuda, nullptr) << name;
      EXPECT_EQ(std::string(cuda->signature), sig) << name;
      EXPECT_NE(cuda->function, nullptr) << name;
#endif
    }
  }
  EXPECT_GE(kernels, 8u);
}

// FIPS 180-4 example "abc" (one padded block) through the kernels' SHA-1 compression, as the
// host's SA-table builder calls it (the IPsec kernel tests check the device side against
// OpenSSL's HMAC).
TEST(OffloadKernelSources, SharedSha1CompressionMatchesFips180Example) {
  uint8_t block[kSha1BlockLen] = {'a', 'b', 'c', 0x80};
  constexpr uint32_t kMessageBits = 24;
  block[kSha1BlockLen - 1] = kMessageBits;
  Sha1State h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  sha1_compress(h, block);
  const Sha1State expected{0xA9993E36, 0x4706816A, 0xBA3E2571, 0x7850C26C, 0x9CD0D89D};
  EXPECT_EQ(h, expected);
}

}  // namespace
}  // namespace fulcrum::offload
