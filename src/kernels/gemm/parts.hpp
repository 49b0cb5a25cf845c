// Pieces of WGSL text shared by the gemm's two kernel templates (gemm.wgsl,
// gemm_pipe.wgsl): bindings, format decoders, epilogue
// stores. Internal to the gemm family (generator.cpp, pipelined.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "kernels/common/spec.hpp"
#include "kernels/gemm/generator.hpp"

namespace blockq::gemm::detail {

uint32_t weights(const Hooks& h);  // 2 for SiLU-gate (gate and up), else 1
std::string acc(const std::string& w, uint32_t i, uint32_t j);  // "accA_i_j"
// Whether the format's matvec layout has a side array (bound after its main).
bool has_side(const KernelSpec& s);
// The storage bindings after x: mainA, [sideA], [mainB, sideB], y.
std::string bindings(const KernelSpec& s);
// The format's ld/dc/dq4 for A (and B).
std::string format_code(const KernelSpec& s);
std::string kscale_code(Format f);  // fmt/kscale.wgsl for Q4_K and Q5_K, fmt/iq4_levels.wgsl for IQ4_NL and IQ4_XS, else ""
// The epilogue statement for output index expression idx and accumulator (i, j).
std::string epilogue(const KernelSpec& s, const std::string& idx, uint32_t i, uint32_t j);
// gemm_pipe.wgsl rendered for s (s.variant kPipelined or kPipelinedUnrolled).
std::string wgsl_pipelined(const KernelSpec& s);
// The spec of a gemm with tiling t (m a run-time value, splits cut to whole steps).
KernelSpec spec_of(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, const Hooks& hooks,
                   const Tiling& t);
// The classic kernels' accumulator declarations and their stores (checked:
// each output's token and row bounds-checked), for gemm.wgsl and gemm_i8.wgsl;
// interleaved: accumulator (i, j) is token 4 (i / 4 * TMT + ty) + i % 4 and
// row 4 (j / 4 * TNT + tx) + j % 4 of the tile (gemm_i8_pipe.wgsl).
std::string acc_decl(const KernelSpec& s);
std::string store_classic(const KernelSpec& s, bool checked, bool interleaved = false);
// gemm_i8.wgsl or (variant kPipelined) gemm_i8_pipe.wgsl rendered for s
// (features.dot4), and its workgroup storage.
std::string wgsl_int8(const KernelSpec& s);
uint32_t shared_bytes_int8(const Tiling& t, const Hooks& h, Format f);

}  // namespace blockq::gemm::detail
