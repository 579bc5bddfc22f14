// Differential tests for the multi-buffer MD5 (src/lib/re/md5_mb.cc) against OpenSSL's MD5 and
// the RFC 1321 test suite: message lengths around every padding boundary, batches that fill
// eight lanes or leave some idle, and lanes of different lengths in one group.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lib/re/md5.hh"
#include "md5_vectors.hh"

namespace fulcrum::re {
namespace {

std::string hex(const Md5Digest& d) {
  static const char* const kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d.b) s += {kDigits[b >> 4], kDigits[b & 15]};
  return s;
}

// Runs md5_bulk_avx2 over `msgs` and compares every digest with OpenSSL's.
void expect_same_as_openssl(const std::vector<std::vector<uint8_t>>& msgs) {
  std::vector<ByteRange> in;
  for (const auto& m : msgs) in.push_back({m.data(), static_cast<uint32_t>(m.size())});
  std::vector<Md5Digest> out(msgs.size());
  md5_bulk_avx2(in.data(), out.data(), static_cast<uint32_t>(in.size()));
  for (size_t i = 0; i < msgs.size(); ++i)
    EXPECT_EQ(hex(out[i]), hex(md5(msgs[i].data(), msgs[i].size())))
        << "message " << i << " of " << msgs.size() << ", " << msgs[i].size() << " bytes";
}

TEST(Md5MultiBuffer, Rfc1321TestSuite) {
  if (!md5_avx2_available()) GTEST_SKIP() << "no AVX2 on this CPU";
  const auto suite = fulcrum::testing::rfc1321_suite();
  std::vector<ByteRange> in;
  for (const auto& [text, digest] : suite)
    in.push_back(
        {reinterpret_cast<const uint8_t*>(text.data()), static_cast<uint32_t>(text.size())});
  std::vector<Md5Digest> out(in.size());
  md5_bulk_avx2(in.data(), out.data(), static_cast<uint32_t>(in.size()));
  for (size_t i = 0; i < suite.size(); ++i) EXPECT_EQ(hex(out[i]), suite[i].second) << i;
}

TEST(Md5MultiBuffer, EveryLengthAroundThePaddingBoundaries) {
  if (!md5_avx2_available()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(1321);
  std::vector<std::vector<uint8_t>> msgs;
  for (uint32_t len = 0; len <= 200; ++len) {
    std::vector<uint8_t> m(len);
    for (uint8_t& b : m) b = static_cast<uint8_t>(rng());
    msgs.push_back(std::move(m));
  }
  expect_same_as_openssl(msgs);  // neighbours differ in length: lanes end at different blocks
}

TEST(Md5MultiBuffer, BatchesOfEverySizeWithMixedLengths) {
  if (!md5_avx2_available()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(64);
  for (uint32_t n = 1; n <= 41; ++n) {
    std::vector<std::vector<uint8_t>> msgs;
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<uint8_t> m(rng() % 1600);
      for (uint8_t& b : m) b = static_cast<uint8_t>(rng());
      msgs.push_back(std::move(m));
    }
    expect_same_as_openssl(msgs);
  }
}

TEST(Md5MultiBuffer, Md5BulkAgreesWithOneMessageAtATime) {
  std::mt19937 rng(5);
  std::vector<std::vector<uint8_t>> msgs;
  for (uint32_t i = 0; i < 64; ++i) {
    std::vector<uint8_t> m(22 + rng() % 64);
    for (uint8_t& b : m) b = static_cast<uint8_t>(rng());
    msgs.push_back(std::move(m));
  }
  std::vector<ByteRange> in;
  for (const auto& m : msgs) in.push_back({m.data(), static_cast<uint32_t>(m.size())});
  std::vector<Md5Digest> out(msgs.size());
  md5_bulk(in.data(), out.data(), static_cast<uint32_t>(in.size()));
  for (size_t i = 0; i < msgs.size(); ++i)
    EXPECT_EQ(hex(out[i]), hex(md5(msgs[i].data(), msgs[i].size()))) << i;
}

}  // namespace
}  // namespace fulcrum::re
