// Test weights shared by the matvec family's tests (matvec_test.cpp,
// rows_test.cpp): every weight kind with its smallest k, and random weights
// quantized from normal values (the bytes a HostWeight points to, owned).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/matvec/layout.hpp"
#include "quant/format.hpp"
#include "quant/onnx.hpp"
#include "support/random.hpp"

namespace blockq::matvec::test {

struct Kind {
  std::string name;
  WeightKind kind;
  uint32_t block;  // smallest k
};

inline std::vector<Kind> all_kinds() {
  std::vector<Kind> v;
  for (Format f : kAllFormats) {
    WeightKind w;
    w.format = f;
    uint32_t block = std::max<uint32_t>(32, traits(f).block_elems);
    v.push_back({std::string(traits(f).name), w, block});
  }
  for (uint8_t bits : {4, 8})
    for (bool zp : {false, true}) {
      WeightKind w;
      w.onnx = true;
      w.bits = bits;
      w.block_size = 32;
      w.zero_points = zp;
      v.push_back({w.name(), w, 32});
    }
  WeightKind w16;
  w16.onnx = true;
  w16.bits = 4;
  w16.block_size = 16;
  w16.zero_points = true;
  v.push_back({w16.name(), w16, 16});
  return v;
}

// Owns the bytes a HostWeight points to.
struct OwnedWeight {
  std::vector<uint8_t> ggml;
  OnnxBlockMatrix onnx;
  HostWeight host;
};

inline OwnedWeight make_weight(const WeightKind& kind, uint32_t n, uint32_t k, uint32_t seed) {
  OwnedWeight o;
  auto vals = blockq::testing_support::random_normal(size_t{n} * k, seed, 0.f, 0.5f);
  o.host.kind = kind;
  o.host.n = n;
  o.host.k = k;
  if (kind.onnx) {
    o.onnx = onnx_quantize(vals, n, k, kind.bits, kind.block_size,
                           kind.zero_points ? OnnxQuantMode::Asymmetric : OnnxQuantMode::Symmetric);
  } else {
    o.ggml = quantize(kind.format, vals);
  }
  return o;
}

inline void fix(OwnedWeight& o) {
  if (o.host.kind.onnx)
    o.host.onnx = &o.onnx;
  else
    o.host.ggml = o.ggml;
}

}  // namespace blockq::matvec::test
