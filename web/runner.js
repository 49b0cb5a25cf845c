// blockq browser runner: loads kernel folders written by `blockq kernels export`
// (format: docs/KERNELS.md), replays each test case with the browser's own
// WebGPU (pipelines from the exported WGSL, buffers and bind groups as the
// export describes them, one submit per case), and compares the outputs with
// the exported expected values (the CPU twin's) and the native run's.

const F32_BYTES = 4;

async function fetchOk(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status}`);
  return r;
}
const fetchJson = async (url) => (await fetchOk(url)).json();
const fetchText = async (url) => (await fetchOk(url)).text();
const fetchBytes = async (url) => new Uint8Array(await (await fetchOk(url)).arrayBuffer());

// IEEE binary16 bits -> number.
export function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// Normwise relative error: max |got - ref| / max |ref| (Infinity on NaN or size mismatch).
export function maxRel(got, ref) {
  if (got.length !== ref.length) return Infinity;
  let err = 0, mag = 0;
  for (let i = 0; i < got.length; ++i) {
    if (Number.isNaN(got[i]) !== Number.isNaN(ref[i])) return Infinity;
    if (Number.isNaN(got[i])) continue;
    err = Math.max(err, Math.abs(got[i] - ref[i]));
    mag = Math.max(mag, Math.abs(ref[i]));
  }
  return err / Math.max(mag, 1e-30);
}

function padTo4(bytes) {
  if (bytes.byteLength % 4 === 0) return bytes;
  const p = new Uint8Array((bytes.byteLength + 3) & ~3);
  p.set(bytes);
  return p;
}

// Runs the validation/out-of-memory error scopes around fn; throws the first error.
async function scoped(device, what, fn) {
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  let value;
  try {
    value = await fn();
  } finally {
    const oom = await device.popErrorScope();
    const val = await device.popErrorScope();
    const err = oom || val;
    if (err) throw new Error(`${what}: ${err.message}`);
  }
  return value;
}

async function makePipeline(device, base, k, cache) {
  if (cache.has(k.wgsl)) return cache.get(k.wgsl);
  const code = await fetchText(base + k.wgsl);
  const pipeline = await scoped(device, `pipeline ${k.key}`, async () => {
    const module = device.createShaderModule({ label: k.key, code });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) {
      throw new Error(`WGSL ${k.wgsl}: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
    }
    return device.createComputePipelineAsync({
      label: k.key, layout: 'auto', compute: { module, entryPoint: k.entry_point || 'main' },
    });
  });
  cache.set(k.wgsl, pipeline);
  return pipeline;
}

function decodeOutput(bytes, dtype, count) {
  if (dtype === 'float32') return new Float32Array(bytes.buffer, bytes.byteOffset, count);
  if (dtype === 'float16') {
    const h = new Uint16Array(bytes.buffer, bytes.byteOffset, count);
    return Float32Array.from(h, f16ToF32);
  }
  if (dtype === 'uint32') return Float32Array.from(new Uint32Array(bytes.buffer, bytes.byteOffset, count));
  throw new Error(`unknown output dtype ${dtype}`);
}

// One exported case: returns { name, pass, outputs: [{ name, maxRelExpected, maxRelNative, tolerance }] }.
async function runCase(device, base, c, pipelineCache) {
  const U = GPUBufferUsage;
  const pipelines = [];
  for (const k of c.kernels) pipelines.push(await makePipeline(device, base, k, pipelineCache));
  const buffers = [];
  const created = [];
  try {
    await scoped(device, `case ${c.name}: buffers`, async () => {
      for (const b of c.buffers) {
        const usage = b.usage === 'uniform' ? U.UNIFORM | U.COPY_DST : U.STORAGE | U.COPY_SRC | U.COPY_DST;
        const buf = device.createBuffer({ label: b.name, size: b.size, usage });
        created.push(buf);
        if (b.init) {
          device.queue.writeBuffer(buf, 0, padTo4(await fetchBytes(base + b.init)));
        } else if (b.usage !== 'uniform') {
          device.queue.writeBuffer(buf, 0, new Uint32Array(b.size / 4).fill(b.poison >>> 0));
        }
        buffers.push(buf);
      }
    });
    const readbacks = [];
    await scoped(device, `case ${c.name}: dispatch`, async () => {
      const enc = device.createCommandEncoder({ label: c.name });
      const pass = enc.beginComputePass({ label: c.name });
      for (const d of c.dispatches) {
        const p = pipelines[d.kernel];
        const group = device.createBindGroup({
          layout: p.getBindGroupLayout(0),
          entries: d.bindings.map((bi, i) => ({ binding: i, resource: { buffer: buffers[bi] } })),
        });
        pass.setPipeline(p);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(d.grid[0], d.grid[1], d.grid[2]);
      }
      pass.end();
      for (const o of c.outputs) {
        const size = buffers[o.buffer].size;
        const rb = device.createBuffer({ label: `${o.name} readback`, size, usage: U.MAP_READ | U.COPY_DST });
        created.push(rb);
        enc.copyBufferToBuffer(buffers[o.buffer], 0, rb, 0, size);
        readbacks.push(rb);
      }
      device.queue.submit([enc.finish()]);
    });
    const outputs = [];
    let pass = true;
    for (let i = 0; i < c.outputs.length; ++i) {
      const o = c.outputs[i];
      await readbacks[i].mapAsync(GPUMapMode.READ);
      const bytes = new Uint8Array(readbacks[i].getMappedRange().slice(0));
      readbacks[i].unmap();
      const got = decodeOutput(bytes, o.dtype, o.count);
      const expBytes = await fetchBytes(base + o.expected);
      const expected = new Float32Array(expBytes.buffer, 0, expBytes.byteLength / F32_BYTES);
      const r = { name: o.name, tolerance: o.tolerance, maxRelExpected: maxRel(got, expected) };
      if (o.native) {
        const nb = await fetchBytes(base + o.native);
        r.maxRelNative = maxRel(got, new Float32Array(nb.buffer, 0, nb.byteLength / F32_BYTES));
      }
      r.pass = r.maxRelExpected <= o.tolerance && (r.maxRelNative === undefined || r.maxRelNative <= o.tolerance);
      pass = pass && r.pass;
      outputs.push(r);
    }
    return { name: c.name, pass, dispatches: c.dispatches.length, outputs };
  } finally {
    for (const b of created) b.destroy();
  }
}

// Runs every case of one exported kernel folder (URL ending in '/').
export async function runKernelFolder(device, base, log = () => {}) {
  const exp = await fetchJson(base + 'export.json');
  if (exp.format !== 'blockq-kernel-export') throw new Error(`${base}export.json: not a blockq kernel export`);
  const result = { kernel: exp.kernel, version: exp.version, exportedOn: exp.exported_on, pass: true, cases: [] };
  const cache = new Map();
  for (const c of exp.cases) {
    let r;
    try {
      r = await runCase(device, base, c, cache);
    } catch (e) {
      r = { name: c.name, pass: false, error: String(e && e.message ? e.message : e), outputs: [] };
    }
    result.pass = result.pass && r.pass;
    result.cases.push(r);
    log(r, exp.kernel);
  }
  return result;
}

// Requests an adapter and a device (default limits: exports made under the
// low-end profile fit them) and runs every listed kernel folder under root.
export async function runAll(root, kernels, log = () => {}) {
  const result = { pass: false, adapter: null, kernels: [], error: null };
  try {
    if (!navigator.gpu) throw new Error('navigator.gpu is missing: no WebGPU in this browser');
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error('requestAdapter() returned null: no WebGPU adapter');
    const info = adapter.info || {};
    result.adapter = { vendor: info.vendor, architecture: info.architecture, device: info.device,
                       description: info.description, features: [...adapter.features] };
    const device = await adapter.requestDevice();
    device.lost.then((l) => { if (l.reason !== 'destroyed') result.error = `device lost: ${l.message}`; });
    if (!kernels || !kernels.length) kernels = (await fetchJson(root + 'index.json')).kernels;
    result.pass = kernels.length > 0;
    for (const k of kernels) {
      let r;
      try {
        r = await runKernelFolder(device, `${root}${k}/`, log);
      } catch (e) {
        r = { kernel: k, pass: false, error: String(e && e.message ? e.message : e), cases: [] };
      }
      result.pass = result.pass && r.pass && r.cases.length > 0;
      result.kernels.push(r);
    }
    device.destroy();
  } catch (e) {
    result.error = String(e && e.message ? e.message : e);
    result.pass = false;
  }
  if (result.error) result.pass = false;
  return result;
}
