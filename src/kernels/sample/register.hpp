// Registration of the sample family's kernel (blockq.Sample) in the kernel
// registry; called by register_all_kernels().
#pragma once

namespace blockq::sample {

void register_kernels();

}  // namespace blockq::sample
