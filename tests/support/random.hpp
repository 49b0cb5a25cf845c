// Shared test helpers: seeded random f32 data, output poisoning, and error
// measures against a float64 reference.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace blockq::testing_support {

// n floats uniform in [lo, hi) from std::mt19937(seed).
std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
// n floats from N(mean, stddev^2), std::mt19937(seed).
std::vector<float> random_normal(size_t n, uint32_t seed, float mean = 0.0f, float stddev = 1.0f);
// n random bytes from std::mt19937(seed).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed);

// The NaN bit pattern outputs are filled with before a run: a value still
// poisoned afterwards was never written.
inline constexpr uint32_t kPoisonBits = 0x7fc0deadu;
void poison(std::span<float> v);
bool is_poison(float v);
// Index of the first poisoned element, or -1 when none is.
long first_poisoned(std::span<const float> v);

// max |got - ref|; +inf if any got is NaN (or the sizes differ).
double max_abs_err(std::span<const float> got, std::span<const double> ref);
// max |got - ref| / max(max |ref|, 1e-30); +inf if any got is NaN.
double max_rel_err(std::span<const float> got, std::span<const double> ref);
// The same against a float reference.
double max_rel_err(std::span<const float> got, std::span<const float> ref);
// sqrt(mean (got - ref)^2) / sqrt(mean ref^2) (ref's rms floored at 1e-30).
double rms_rel_err(std::span<const float> got, std::span<const float> ref);

}  // namespace blockq::testing_support
