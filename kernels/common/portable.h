// One kernel source, three compilers: the macros and helpers kernels/*.cl are written in, so the
// same text compiles as OpenCL C (PoCL and other OpenCL devices, embedded by
// kernels/embed_opencl.cmake), as CUDA C++ (nvcc) and as host C++: the headers the host shares
// (record layouts, SHA-1) and whole kernels for the emulated device (offload/emu/). The CUDA and
// host builds of a kernel are thin files the build writes (kernels/register_kernels.cmake). The
// approach is hashcat's (an OpenCL source built for CUDA through a vendor header); the names here
// are ours.
//
//   GLOBAL, CONSTANT, LOCAL   address space of a pointer's target (device, constant, work-group)
//   CONSTANT_MEM, LOCAL_MEM   storage of a program-scope constant table / a work-group array
//   RESTRICT                  a pointer parameter no other parameter aliases
//   KERNEL                    an entry point, launched by name (extern "C" on CUDA)
//   INLINE                    a device function (static inline on OpenCL C)
//   GLOBAL_ID(), LOCAL_ID(), GROUP_ID(), GROUP_SIZE()   dimension 0 of the work-item ids, uint32_t
//   LOCAL_BARRIER()           every work item of the group waits; local memory is then visible
//   LOAD_RO(p)                *p through the read-only data cache where there is one
//   STATIC_ASSERT(c, msg)     a compile-time check in every one of the three
//   UNROLL                    unroll the loop that follows (nothing on the host: GCC warns)
//   uint8_t .. uint64_t       fixed-width integers (OpenCL C has no <stdint.h>)
//   rotl32, bswap32           32-bit rotate left (any n, taken mod 32) and byte swap
//   load_le32(p)              the little-endian 32-bit word at p, any alignment
//   u32x4, make_u32x4, load_u32x4_aligned, store_u32x4_aligned   four words; 16-byte aligned I/O
//
// Kernels are one-dimensional; kernel parameters are GLOBAL pointers and uint32_t counts (the
// backends' 'b' and 'u', offload/device.hh).
#ifndef FULCRUM_KERNELS_COMMON_PORTABLE_H
#define FULCRUM_KERNELS_COMMON_PORTABLE_H

#if defined(__OPENCL_C_VERSION__)

typedef uchar uint8_t;
typedef ushort uint16_t;
typedef uint uint32_t;
typedef ulong uint64_t;
typedef uint4 u32x4;

#define GLOBAL __global
#define CONSTANT __constant
#define LOCAL __local
#define CONSTANT_MEM __constant
#define LOCAL_MEM __local
#define RESTRICT restrict
#define KERNEL __kernel
#define INLINE static inline
#define GLOBAL_ID() ((uint32_t)get_global_id(0))
#define LOCAL_ID() ((uint32_t)get_local_id(0))
#define GROUP_ID() ((uint32_t)get_group_id(0))
#define GROUP_SIZE() ((uint32_t)get_local_size(0))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define LOAD_RO(p) (*(p))
#define STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#define UNROLL _Pragma("unroll")

INLINE uint32_t rotl32(uint32_t x, uint32_t n) {
  return rotate(x, n);
}
INLINE uint32_t bswap32(uint32_t x) {
  return as_uint(as_uchar4(x).wzyx);
}
INLINE uint32_t load_le32(GLOBAL const uint8_t* p) {
  const uchar4 v = vload4(0, p);
  return (uint32_t)v.x | ((uint32_t)v.y << 8) | ((uint32_t)v.z << 16) | ((uint32_t)v.w << 24);
}
INLINE u32x4 make_u32x4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (u32x4)(a, b, c, d);
}
INLINE u32x4 load_u32x4_aligned(GLOBAL const uint8_t* p) {
  return vload4(0, (GLOBAL const uint32_t*)p);
}
INLINE void store_u32x4_aligned(GLOBAL uint8_t* p, u32x4 v) {
  vstore4(v, 0, (GLOBAL uint32_t*)p);
}

#elif defined(__CUDACC__)

#include <stddef.h>
#include <stdint.h>

typedef uint4 u32x4;

#define GLOBAL
#define CONSTANT
#define LOCAL
#define CONSTANT_MEM __constant__
#define LOCAL_MEM __shared__
#define RESTRICT __restrict__
#define KERNEL extern "C" __global__
#define INLINE static __device__ __forceinline__
#define GLOBAL_ID() (blockIdx.x * blockDim.x + threadIdx.x)
#define LOCAL_ID() (threadIdx.x)
#define GROUP_ID() (blockIdx.x)
#define GROUP_SIZE() (blockDim.x)
#define LOCAL_BARRIER() __syncthreads()
#define LOAD_RO(p) __ldg(p)
#define STATIC_ASSERT(c, msg) static_assert(c, msg)
#define UNROLL _Pragma("unroll")

INLINE uint32_t rotl32(uint32_t x, uint32_t n) {
  return __funnelshift_l(x, x, n);
}
INLINE uint32_t bswap32(uint32_t x) {
  return __byte_perm(x, 0, 0x0123);
}
// One 32-bit load where p is word aligned (CUDA devices are little-endian), bytes otherwise.
INLINE uint32_t load_le32(const uint8_t* p) {
  if ((reinterpret_cast<uintptr_t>(p) & (sizeof(uint32_t) - 1)) == 0)
    return __ldg(reinterpret_cast<const uint32_t*>(p));
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
INLINE u32x4 make_u32x4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return make_uint4(a, b, c, d);
}
INLINE u32x4 load_u32x4_aligned(const uint8_t* p) {
  return *reinterpret_cast<const uint4*>(p);
}
INLINE void store_u32x4_aligned(uint8_t* p, u32x4 v) {
  *reinterpret_cast<uint4*>(p) = v;
}

#else  // host C++: what the headers the host shares (sa_record.h, sha1.h) need, and with
       // FULCRUM_HOST_KERNELS whole kernels, for the emulated device (offload/emu/host_kernel.hh)

#include <cstddef>
#include <cstdint>
#include <cstring>

#define INLINE inline
#define STATIC_ASSERT(c, msg) static_assert(c, msg)
#define UNROLL

INLINE uint32_t rotl32(uint32_t x, uint32_t n) {
  return (x << (n & 31u)) | (x >> ((32u - n) & 31u));
}
INLINE uint32_t bswap32(uint32_t x) {
  return __builtin_bswap32(x);
}

#if defined(FULCRUM_HOST_KERNELS)

// The host runs a kernel one work item after the other, each alone in its work group: the
// cooperative staging loops (k = LOCAL_ID(); k < n; k += GROUP_SIZE()) then copy the whole table
// for each item, and a barrier has nobody to wait for. fulcrum_host_work_item is the item.
inline thread_local uint32_t fulcrum_host_work_item = 0;

#define GLOBAL
#define CONSTANT
#define LOCAL
#define CONSTANT_MEM static const
#define LOCAL_MEM
#define RESTRICT __restrict
#define KERNEL static
#define GLOBAL_ID() (fulcrum_host_work_item)
#define LOCAL_ID() (0u)
#define GROUP_ID() (fulcrum_host_work_item)
#define GROUP_SIZE() (1u)
#define LOCAL_BARRIER() ((void)0)
#define LOAD_RO(p) (*(p))

struct u32x4 {
  uint32_t x, y, z, w;
};

INLINE uint32_t load_le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // the hosts we build for are little-endian
}
INLINE u32x4 make_u32x4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return u32x4{a, b, c, d};
}
INLINE u32x4 load_u32x4_aligned(const uint8_t* p) {
  u32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
INLINE void store_u32x4_aligned(uint8_t* p, u32x4 v) {
  std::memcpy(p, &v, sizeof v);
}

#endif  // FULCRUM_HOST_KERNELS

#endif

#endif  // FULCRUM_KERNELS_COMMON_PORTABLE_H
