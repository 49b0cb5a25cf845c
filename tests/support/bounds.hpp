// Error bounds the twin tests share: f32's unit roundoff and the relative
// error bound of a max-subtracted softmax row in the reduction order of
// kernels/common/reduce_twin.hpp.
#pragma once
#include <cmath>
#include <cstdint>

namespace blockq::testing_support {

inline constexpr double kU = 0x1p-24;

// Relative error bound of every softmax output, given max |x*scale| = vmax
// over a row of n and the extra absolute error ds of the inputs: the exponent
// d = v - m is off by at most ds*2 + u(|v| + |m| + |d|), expf adds 1 ulp (2u),
// and the tree sum of positive terms adds (ceil(n/wg) + log2(wg)) u; the
// quotient u. The e error enters twice (e_j, s).
inline double softmax_rel_bound(double vmax, double ds, uint32_t n, uint32_t wg) {
  const double e = 2 * kU + 4 * vmax * kU + 2 * ds;
  return 2 * e + (double((n + wg - 1) / wg) + std::log2(wg) + 1) * kU;
}

}  // namespace blockq::testing_support
