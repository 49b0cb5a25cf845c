// The matvec generator's internal helpers: the lane step (the UNIT_LOOP part
// of matvec.wgsl) that the f32 step (generator.cpp) and the int8-activation
// step (int8.cpp) share, the row sums and store (rows_sum.cpp), and the
// timing probes (probes.cpp).
#pragma once
#include <string>
#include <vector>

#include "kernels/common/spec.hpp"
#include "kernels/matvec/layout.hpp"

namespace blockq {
class Template;
}

namespace blockq::matvec::detail {

// The weights a kernel reads: "A", and "B" for the SiLU-gate's up weight.
std::vector<std::string> weight_names(const KernelSpec& s);
// Accumulator of weight w, token t, lane group row i: one scalar each, so
// nothing is indexed at run time.
std::string acc(const std::string& w, uint32_t t, uint32_t i = 0);
// Name of weight w's unit j of the lane group's row i.
std::string unit_name(uint32_t j, const std::string& w, uint32_t i);
// The loads of a step: UNROLL units (uu_j = u + j * TPR) of each weight for
// each of the lane group's RPL rows, before any is decoded.
// Pipelined (spec.variant kPipeline): decode the words fetched by the step
// before (pf<unit>) and fetch the next step's; pipeline_prefetch is the
// first fetch, before the lane loop.
std::string unit_loads(const KernelSpec& s);
std::string pipeline_prefetch(const KernelSpec& s);

// The step for spec.features.dot4 (int8.cpp).
std::string unit_loop_i8(const KernelSpec& s, const UnitInfo& ui);

// The row sums and the row store (rows_sum.cpp). row_map: the output row of
// lane group slot `slot` (NeoX RoPE pairs rows); epilogue: the bias and the
// epilogue of v for (token tg, row gr), `up` the SiLU-gate's up sum, `yold`
// Acc's old y where it was read already (kAccEarly); reduce:
// the lanes' sums of each row into rs; direct_store (subgroups, no split-k,
// no RoPE): the butterfly leaves each row's sum in its lanes and
// reduce_direct stores it from lane 0 (no rs, no barrier).
std::string row_map(const KernelSpec& s, const std::string& slot);
std::string epilogue(const KernelSpec& s, const std::string& up, const std::string& yold = "");
std::string reduce(const KernelSpec& s);
bool direct_store(const KernelSpec& s);
std::string reduce_direct(const KernelSpec& s);
// kAccEarly: lane 0 of each lane group reads its rows' old y (yo0_<i>) before
// the lane loop, for reduce_direct's Acc epilogue; "" without it.
std::string acc_early_reads(const KernelSpec& s);

// Every occurrence of a in s replaced by b.
std::string replace_all(std::string s, const std::string& a, const std::string& b);
// Rewrites the kernel's template for the timing probe of s (probes.cpp).
void apply_probe(const KernelSpec& s, const UnitInfo& ui, Template& t);

}  // namespace blockq::matvec::detail
