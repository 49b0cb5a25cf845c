// The matvec's row store (matvec.wgsl) where the row sums are in workgroup
// memory (rs): one invocation per (token, row) of the workgroup runs the
// epilogue.
  workgroupBarrier();
  for (var e = li; e < TOKENS * RPW; e += WG) {
    let t = e / RPW;
    let slot = e % RPW;
    let tg = z * TOKENS + t;
    let r = {{ROW_MAP_SLOT}};
    if (live && tg < M && r < params.rows) {
      let gr = params.row0 + r;          // row of the whole output
      var v = rs[t * RPW + slot];
{{EPILOGUE}}
    }
  }
