// The x quantize kernel's body (xquant.wgsl) with one invocation a block b
// of token t (xquant_one.wgsl): the portable form, and the form with the
// RMSNorm prologue, whose scale each workgroup reduces in the matvec's WG
// (rms_scale.wgsl), so the twin's order holds.
{{PROLOGUE}}
  let b = wid.x * WG + li;
  if (b < TBK) { quant_one(t, b, {{NS}}); }
