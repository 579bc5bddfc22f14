/* A stand-in for libnvidia-ml.so.1 with the few functions runtime/nvml.cc loads, for
 * tests/nvml_test.cc (these machines have no GPU). Two devices, at PCI bus ids
 * 00000000:3B:00.0 and 00000000:AF:00.0. Each read of the energy counter advances it by
 * 2500 mJ (device 0) or 7000 mJ (device 1); the power is a constant 100 W and 250 W.
 * FAKE_NVML_NO_ENERGY=1: the energy counter is not supported (pre-Volta), so the meter samples
 * the power. FAKE_NVML_INIT_FAILS=1: nvmlInit fails. */
#include <stdlib.h>
#include <string.h>

enum { kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3 };
enum { kDevices = 2 };

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static const char* const kBusIds[kDevices] = {"00000000:3B:00.0", "00000000:AF:00.0"};
static const unsigned long long kStepMj[kDevices] = {2500, 7000};
static const unsigned int kPowerMw[kDevices] = {100000, 250000};
static unsigned long long energy_mj[kDevices] = {1000000, 5000000};
static int handles[kDevices];
static int initialized;

static int flag(const char* name) {
  const char* v = getenv(name);
  return v != NULL && strcmp(v, "1") == 0;
}

static int index_of(void* h) {
  for (int i = 0; i < kDevices; ++i)
    if (h == &handles[i]) return i;
  return -1;
}

int nvmlInit_v2(void) {
  if (flag("FAKE_NVML_INIT_FAILS")) return kUninitialized;
  initialized = 1;
  return kSuccess;
}

int nvmlShutdown(void) {
  initialized = 0;
  return kSuccess;
}

const char* nvmlErrorString(int r) {
  return r == kNotSupported ? "Not Supported" : r == kUninitialized ? "Uninitialized" : "Error";
}

int nvmlDeviceGetCount_v2(unsigned int* n) {
  if (!initialized) return kUninitialized;
  *n = kDevices;
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** h) {
  if (!initialized || i >= kDevices) return kInvalidArgument;
  *h = &handles[i];
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(void* h, nvmlPciInfo_t* info) {
  const int i = index_of(h);
  if (i < 0) return kInvalidArgument;
  memset(info, 0, sizeof *info);
  strcpy(info->busId, kBusIds[i]);
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* h, unsigned long long* mj) {
  const int i = index_of(h);
  if (i < 0) return kInvalidArgument;
  if (flag("FAKE_NVML_NO_ENERGY")) return kNotSupported;
  energy_mj[i] += kStepMj[i];
  *mj = energy_mj[i];
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* h, unsigned int* mw) {
  const int i = index_of(h);
  if (i < 0) return kInvalidArgument;
  *mw = kPowerMw[i];
  return kSuccess;
}
