// Registration of the attention family's kernel (blockq.Attention) in the
// kernel registry; called by register_all_kernels().
#pragma once

namespace blockq::attention {

void register_kernels();

}  // namespace blockq::attention
