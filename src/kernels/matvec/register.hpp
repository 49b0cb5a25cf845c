// Registration of the matvec family's kernels (blockq.QuantizedMatVec,
// com.microsoft.MatMulNBits) in the kernel registry; called by register_all_kernels().
#pragma once

namespace blockq::matvec {

void register_kernels();

}  // namespace blockq::matvec
