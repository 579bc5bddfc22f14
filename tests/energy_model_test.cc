// The energy model (runtime/energy_model.hh) on synthetic inputs: each device's joules, watts
// and joules per Mbit, the measured/modelled labels, the parameter file, and the profile
// points' modelled power.
#include "runtime/energy_model.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "offload/service.hh"

namespace fulcrum {
namespace {

EnergyModel small_model() {
  EnergyModel m;
  m.cpu_core = {5, 15, 1e-6, "test"};
  m.device = {30, 250, 2e-6, "test"};
  m.backends["emu"] = {10, 50, 0, "test"};
  m.host_device = {0, 30, 0, "test"};
  m.source = "test";
  return m;
}

TEST(EnergyModel, DefaultsAreTheDocumentedPaper001Figures) {
  const EnergyModel m = EnergyModel::defaults();
  EXPECT_DOUBLE_EQ(m.cpu_core.busy_w, 15);  // (77 W die - 17 W integrated GPU) / 4 cores
  EXPECT_DOUBLE_EQ(m.device.busy_w, 250);   // GTX 780 Ti TDP
  EXPECT_DOUBLE_EQ(m.device.idle_w, 30);    // 20 W I/O hub + 10 W board
  EXPECT_NE(m.cpu_core.source.find("paper 001"), std::string::npos);
  EXPECT_EQ(&m.for_backend("cuda"), &m.device);
}

TEST(EnergyModel, ModelsEveryDeviceWhereNothingMeasures) {
  EnergyInputs in;
  in.seconds = 2;
  in.bytes_out = 125'000'000;  // 1000 Mbit
  in.packets = 1'000'000;
  in.workers = 2;
  in.cpu_source = "no RAPL zones under /x";
  in.devices.push_back({"emu:gpu0", "emu", 0.5, 400'000, std::nullopt, "not a CUDA device"});
  in.devices.push_back({"cuda:gpu1", "cuda", 1.0, 100'000, std::nullopt, "no NVML: cannot load"});
  in.devices.push_back({"opencl:unused", "opencl", 0, 0, std::nullopt, "not a CUDA device"});
  const EnergyReport r = energy_report(small_model(), in);
  ASSERT_EQ(r.devices.size(), 4u);
  // Given no packet: counted off.
  EXPECT_DOUBLE_EQ(r.devices[3].joules, 0);
  EXPECT_EQ(r.devices[3].why_not_measured, "not a CUDA device; unused: counted off");
  // CPU: 2 polling cores at 15 W for 2 s + 1 uJ x 1e6 packets = 60 + 1 J.
  EXPECT_DOUBLE_EQ(r.devices[0].joules, 61);
  EXPECT_EQ(r.devices[0].device, "cpu (2 worker cores)");
  EXPECT_FALSE(r.devices[0].measured);
  EXPECT_EQ(r.devices[0].why_not_measured, "no RAPL zones under /x");
  EXPECT_EQ(r.devices[0].source, "model test");
  // emu (its own entry): 10 W x 2 s + 40 W x 0.5 s busy = 40 J.
  EXPECT_DOUBLE_EQ(r.devices[1].joules, 40);
  EXPECT_DOUBLE_EQ(r.devices[1].watts, 20);
  EXPECT_DOUBLE_EQ(r.devices[1].joules_per_mbit, 0.04);
  // cuda (the device entry): 30 W x 2 s + 220 W x 1 s + 2 uJ x 1e5 = 60 + 220 + 0.2 J.
  EXPECT_DOUBLE_EQ(r.devices[2].joules, 280.2);
  EXPECT_DOUBLE_EQ(r.joules, 61 + 40 + 280.2);
  EXPECT_DOUBLE_EQ(r.watts, r.joules / 2);
  EXPECT_DOUBLE_EQ(r.joules_per_mbit, r.joules / 1000);
  EXPECT_FALSE(r.measured);
  EXPECT_STREQ(r.basis(), "modelled");
}

TEST(EnergyModel, ADeviceOnTheHostCostsTheHostsCoresWhileBusyAndNothingIdle) {
  // PoCL (an OpenCL device of kind CPU) has no board to keep on: its energy is the host's cores
  // while it computes, not the discrete GPU's figures an OpenCL GPU would get.
  EnergyModel m = small_model();
  m.host_device = {0, 30, 0, "test: two cores at 15 W"};
  EnergyInputs in;
  in.seconds = 2;
  in.bytes_out = 125'000'000;
  in.workers = 1;
  in.devices.push_back({"opencl:pocl", "opencl", 0.5, 1000, std::nullopt, "not a CUDA device",
                        /*on_host=*/true});
  in.devices.push_back({"opencl:gpu", "opencl", 0.5, 1000, std::nullopt, "not a CUDA device"});
  const EnergyReport r = energy_report(m, in);
  ASSERT_EQ(r.devices.size(), 3u);
  EXPECT_DOUBLE_EQ(r.devices[1].joules, 30 * 0.5);                          // busy 0.5 s, idle 0
  EXPECT_DOUBLE_EQ(r.devices[2].joules, 30 * 2 + 220 * 0.5 + 2e-6 * 1000);  // the device entry
  const EnergyModel d = EnergyModel::defaults();
  EXPECT_DOUBLE_EQ(d.host_device.idle_w, 0);
  EXPECT_DOUBLE_EQ(d.host_device.busy_w, 15.0 * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(&d.for_device("opencl", true), &d.host_device);
  EXPECT_EQ(&d.for_device("opencl", false), &d.device);
}

TEST(EnergyModel, ADeviceIdlesOnlyInTheWindowsItWasUsed) {
  // A balancer that sends work to the device in a quarter of the run's windows: its idle power
  // counts for that quarter, not the whole run (paper 001 powers an unused GPU off).
  EnergyModel m = small_model();
  EnergyInputs in;
  in.seconds = 2;
  in.bytes_out = 125'000'000;
  in.devices.push_back({"emu:0", "emu", 0.2, 1000, std::nullopt, "not a CUDA device"});
  in.devices.back().on_s = 0.5;
  in.devices.push_back({"emu:1", "emu", 0.2, 1000, std::nullopt, "not a CUDA device"});
  in.devices.back().on_s = 0.1;  // fewer windows than its busy time: on at least while busy
  in.devices.push_back({"emu:2", "emu", 0.2, 1000, std::nullopt, "not a CUDA device"});
  const EnergyReport r = energy_report(m, in);
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_DOUBLE_EQ(r.devices[1].joules, 10 * 0.5 + 40 * 0.2);
  EXPECT_DOUBLE_EQ(r.devices[2].joules, 10 * 0.2 + 40 * 0.2);
  EXPECT_DOUBLE_EQ(r.devices[3].joules, 10 * 2 + 40 * 0.2);  // on_s unknown: the whole run

  offload::DeviceStats st;
  constexpr uint64_t kW = offload::DeviceStats::kOnWindowNs;
  const uint64_t t0 = 1000 * kW;
  for (const uint64_t t : {t0, t0 + 1, t0 + kW / 2, t0 + kW, t0 + 3 * kW, t0 + 3 * kW + 5, t0 + kW})
    st.mark_on(t);  // windows t0, t0+1, t0+3; the late t0+1 again is not counted twice
  EXPECT_EQ(st.on_windows.load(), 3u);
}

TEST(EnergyModel, SaysMeasuredWhereAMeterMeasured) {
  EnergyInputs in;
  in.seconds = 1;
  in.bytes_out = 12'500'000;  // 100 Mbit
  in.workers = 1;
  in.cpu_joules = 42;
  in.cpu_source = "RAPL package-0";
  EnergyReport r = energy_report(small_model(), in);
  EXPECT_TRUE(r.measured);
  EXPECT_STREQ(r.basis(), "measured");
  EXPECT_EQ(r.source, "RAPL package-0");
  EXPECT_DOUBLE_EQ(r.joules_per_mbit, 0.42);

  in.devices.push_back({"cuda:gpu0", "cuda", 0.2, 10, 7.5, "NVML energy counter"});
  in.devices.push_back({"opencl:cpu", "opencl", 0.2, 10, std::nullopt, "not a CUDA device"});
  r = energy_report(small_model(), in);
  EXPECT_STREQ(r.basis(), "measured + modelled");
  EXPECT_TRUE(r.devices[1].measured);
  EXPECT_EQ(r.devices[1].source, "NVML energy counter");
  EXPECT_DOUBLE_EQ(r.devices[1].joules, 7.5);
  EXPECT_FALSE(r.devices[2].measured);
  EXPECT_FALSE(r.measured);
}

TEST(EnergyModel, AMeasuredUnusedDeviceCountsItsIdleDrawAndIsReportedApart) {
  // An H200 given no work drew 123 W idle through NVML (docs/benchmarks.md): that is counted,
  // not "off"; the figure with it powered off is reported beside.
  EnergyInputs in;
  in.seconds = 2;
  in.bytes_out = 12'500'000;  // 100 Mbit
  in.workers = 1;
  in.cpu_joules = 30;
  in.cpu_source = "RAPL package-0";
  in.devices.push_back({"cuda:gpu0", "cuda", 0, 0, 246.0, "NVML energy counter"});
  const EnergyReport r = energy_report(small_model(), in);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_TRUE(r.devices[1].unused);
  EXPECT_DOUBLE_EQ(r.devices[1].joules, 246);
  EXPECT_EQ(r.devices[1].source, "NVML energy counter; unused: idle draw, not powered off");
  EXPECT_DOUBLE_EQ(r.joules, 276);
  EXPECT_DOUBLE_EQ(r.unused_joules, 246);
  EXPECT_DOUBLE_EQ(r.joules_per_mbit, 2.76);
  EXPECT_DOUBLE_EQ(r.joules_per_mbit_unused_off, 0.30);
}

TEST(EnergyModel, ReadsAndWritesItsParameterFile) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("energy-model-" + std::to_string(::getpid()) + ".json");
  EnergyModel m = small_model();
  ASSERT_TRUE(write_energy_model(m, path));
  Result<EnergyModel> back = read_energy_model(path);
  ASSERT_TRUE(back) << back.error();
  EXPECT_DOUBLE_EQ(back.value().cpu_core.j_per_packet, 1e-6);
  EXPECT_DOUBLE_EQ(back.value().for_backend("emu").busy_w, 50);
  EXPECT_DOUBLE_EQ(back.value().host_device.busy_w, m.host_device.busy_w);
  EXPECT_EQ(back.value().source, path);

  std::ofstream(path) << R"({"cpu_core": {"idle_w": 20, "busy_w": 10}})";
  Result<EnergyModel> bad = read_energy_model(path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("\"idle_w\" is above \"busy_w\""), std::string::npos) << bad.error();
  std::ofstream(path) << R"({"gpu": {}})";
  bad = read_energy_model(path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("unknown key \"gpu\""), std::string::npos) << bad.error();
  std::filesystem::remove(path);
}

TEST(EnergyModel, PointPowerIsIdlePlusBusyShareAndPackets) {
  const EnergyModel m = small_model();
  const PointPower cpu = point_power(m, 2, nullptr, 0, 1e6, 0);
  EXPECT_DOUBLE_EQ(cpu.idle_w, 10);
  EXPECT_DOUBLE_EQ(cpu.power_w, 30 + 1);  // 2 x 15 W + 1 uJ x 1 Mpps
  const PointPower both = point_power(m, 2, &m.device, 0.5, 1e6, 5e5);
  EXPECT_DOUBLE_EQ(both.idle_w, 10 + 30);
  EXPECT_DOUBLE_EQ(both.power_w, 31 + 30 + 110 + 1);  // + idle + half of 220 W + 2 uJ x 0.5 Mpps
}

}  // namespace
}  // namespace fulcrum
