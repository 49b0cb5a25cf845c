// Shared test helpers: seeded random data, poisoning, error measures.
#include "support/random.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace blockq::testing_support {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> random_normal(size_t n, uint32_t seed, float mean, float stddev) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng() >> 24);
  return v;
}

void poison(std::span<float> v) { std::fill(v.begin(), v.end(), std::bit_cast<float>(kPoisonBits)); }

bool is_poison(float v) { return std::bit_cast<uint32_t>(v) == kPoisonBits; }

long first_poisoned(std::span<const float> v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (is_poison(v[i])) return static_cast<long>(i);
  }
  return -1;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTiny = 1e-30;

template <typename Ref>
double abs_err(std::span<const float> got, std::span<const Ref> ref) {
  if (got.size() != ref.size()) return kInf;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
    if (std::isnan(e)) return kInf;
    worst = std::max(worst, e);
  }
  return worst;
}

template <typename Ref>
double rel_err(std::span<const float> got, std::span<const Ref> ref) {
  const double err = abs_err(got, ref);
  double scale = 0;
  for (const Ref r : ref) scale = std::max(scale, std::fabs(static_cast<double>(r)));
  return err / std::max(scale, kTiny);
}

}  // namespace

double max_abs_err(std::span<const float> got, std::span<const double> ref) { return abs_err(got, ref); }
double max_rel_err(std::span<const float> got, std::span<const double> ref) { return rel_err(got, ref); }
double max_rel_err(std::span<const float> got, std::span<const float> ref) { return rel_err(got, ref); }

double rms_rel_err(std::span<const float> got, std::span<const float> ref) {
  if (got.size() != ref.size() || got.empty()) return kInf;
  double se = 0, sr = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
    if (std::isnan(d)) return kInf;
    se += d * d;
    sr += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  return std::sqrt(se / static_cast<double>(got.size())) /
         std::max(std::sqrt(sr / static_cast<double>(got.size())), kTiny);
}

}  // namespace blockq::testing_support
