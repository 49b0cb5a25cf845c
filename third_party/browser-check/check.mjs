// Browser check driver: serves web/ and an export folder (`blockq kernels
// export`) on 127.0.0.1, runs web/index.html in headless Debian Chromium with
// SwiftShader WebGPU, and checks every exported case passes (against the CPU
// twin's expected outputs and the native run's). Fails (never skips) when
// Chromium or node_modules is missing. Bounded: stops itself after --timeout s.
//
//   node check.mjs --export DIR --web DIR [--kernels a,b] [--timeout 300] [--probe]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-webgpu-adapter=swiftshader',
  '--no-sandbox', '--headless=new', '--disable-gpu-sandbox',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
];

function parseArgs(argv) {
  const a = { export: null, web: path.resolve(here, '../../web'), kernels: '', timeout: 300, probe: false };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--export') a.export = path.resolve(next());
    else if (k === '--web') a.web = path.resolve(next());
    else if (k === '--kernels') a.kernels = next();
    else if (k === '--timeout') a.timeout = Number(next());
    else if (k === '--probe') a.probe = true;
    else fail(`unknown argument ${k}`);
  }
  if (!a.probe && !a.export) fail('--export DIR is required');
  if (!(a.timeout > 0)) fail('--timeout must be > 0');
  return a;
}

function fail(msg) {
  console.error(`browser-check: FAIL: ${msg}`);
  process.exit(1);
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json',
                '.wgsl': 'text/plain', '.bin': 'application/octet-stream' };

// GET-only static server: /export/... from the export folder, everything else from web/.
function serve(webDir, exportDir) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let rel = decodeURIComponent(url.pathname);
    let root = webDir;
    if (rel.startsWith('/export/') && exportDir) {
      root = exportDir;
      rel = rel.slice('/export'.length);
    }
    if (rel === '/') rel = '/index.html';
    const file = path.resolve(root, '.' + rel);
    if (req.method !== 'GET' || !file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(req.method === 'GET' ? 404 : 405).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  server.keepAliveTimeout = 1000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing (scripts/setup.sh installs Debian's chromium)`);
  const pw = path.join(here, 'node_modules', 'playwright-core', 'index.mjs');
  if (!fs.existsSync(pw)) fail(`${pw} is missing: run scripts/setup.sh (npm ci in third_party/browser-check)`);
  if (args.export && !fs.existsSync(path.join(args.export, 'index.json'))) fail(`${args.export}/index.json is missing: run blockq kernels export first`);
  const { chromium } = await import(pw);

  const server = await serve(args.web, args.export);
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blockq-chromium-'));
  let context = null;
  const cleanup = async () => {
    if (context) await context.close().catch(() => {});
    context = null;
    server.close();
    server.closeAllConnections?.();
    fs.rmSync(userDir, { recursive: true, force: true });
  };
  const watchdog = setTimeout(async () => {
    console.error(`browser-check: FAIL: timed out after ${args.timeout} s`);
    await cleanup();
    process.exit(2);
  }, args.timeout * 1000);

  let code = 1;
  try {
    context = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM, headless: true, args: FLAGS,  // the fresh profile: userDir
    });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') console.error(`browser console: ${m.text()}`); });
    page.on('pageerror', (e) => console.error(`browser page error: ${e.message}`));
    const base = `http://127.0.0.1:${server.address().port}`;
    if (args.probe) {
      await page.goto(`${base}/runner.js`);
      const info = await page.evaluate(async () => {
        if (!navigator.gpu) return { error: 'navigator.gpu is missing' };
        const a = await navigator.gpu.requestAdapter();
        if (!a) return { error: 'no adapter' };
        return { vendor: a.info.vendor, architecture: a.info.architecture, description: a.info.description,
                 features: [...a.features], maxStorageBufferBindingSize: a.limits.maxStorageBufferBindingSize };
      });
      console.log(`browser-check: adapter ${JSON.stringify(info)}`);
      code = info.error ? 1 : 0;
    } else {
      const q = new URLSearchParams({ root: '/export/', kernels: args.kernels });
      await page.goto(`${base}/index.html?${q}`);
      await page.waitForFunction(() => window.blockqDone === true, null, { timeout: args.timeout * 1000, polling: 200 });
      const r = await page.evaluate(() => window.blockqResult);
      const a = r.adapter || {};
      console.log(`browser-check: chromium ${context.browser()?.version() ?? ''} adapter ${a.vendor}/${a.architecture} ${a.description || ''}`);
      let passed = 0, failed = 0;
      for (const k of r.kernels) {
        if (k.error) console.log(`FAIL ${k.kernel}: ${k.error}`);
        for (const c of k.cases) {
          const o = c.outputs[0] || {};
          console.log(`${c.pass ? 'PASS' : 'FAIL'} ${k.kernel}/${c.name}  max rel vs expected ${o.maxRelExpected}  vs native ${o.maxRelNative}  (tol ${o.tolerance})${c.error ? '  ' + c.error : ''}`);
          c.pass ? ++passed : ++failed;
        }
        if (k.error || !k.cases.length) ++failed;
      }
      if (r.error) console.log(`FAIL: ${r.error}`);
      console.log(`${passed} passed, ${failed} failed`);
      code = r.pass && failed === 0 && passed > 0 ? 0 : 1;
    }
  } catch (e) {
    console.error(`browser-check: FAIL: ${e && e.stack ? e.stack : e}`);
    code = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
  process.exit(code);
}

main();
