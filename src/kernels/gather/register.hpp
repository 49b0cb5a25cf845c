// Registration of the gather family's kernels (com.microsoft.GatherBlockQuantized,
// blockq.Embedding) in the kernel registry; called by register_all_kernels().
#pragma once

namespace blockq::gather {

void register_kernels();

}  // namespace blockq::gather
