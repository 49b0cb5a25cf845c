// `blockq bench matvec`: the matvec benchmark table (or --json), with the
// streaming-read bandwidth measured in the same run as the ceiling.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "tools/context.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

WeightKind parse_kind(const std::string& s) {
  WeightKind w;
  if (s.rfind("onnx", 0) == 0) {  // onnx4, onnx8, onnx4zp, onnx4b32zp
    w.onnx = true;
    w.bits = s.size() > 4 && s[4] == '8' ? 8 : 4;
    w.block_size = 32;
    auto b = s.find('b');
    if (b != std::string::npos) w.block_size = std::stoul(s.substr(b + 1));
    w.zero_points = s.find("zp") != std::string::npos;
    return w;
  }
  auto f = format_from_name(s);
  BQ_CHECK(f, "unknown format '{}'", s);
  w.format = *f;
  return w;
}

void add_bench(CLI::App& app, GlobalOptions& g) {
  CLI::App* bench = &bench_group(app);
  auto* mv = bench->add_subcommand("matvec", "Quantized matrix-vector kernels against the read bandwidth");
  struct Opts {
    std::string formats = "q8_0,q4_0,q4_1,q5_0,q5_1,q4_K,q5_K,q6_K,f16,onnx4,onnx8zp";
    std::string shapes = "49152x960,2560x960,14336x4096,4096x14336";
    std::string batches = "1,8";
    std::string hooks = "store";
    std::string sweep;  // e.g. "wg=128,256;tpr=16,32;unroll=1,2,4;rpl=1,2;sg=0,1;i8=0,1"
    bool json = false, quick = false, rows = false;
    int samples = 15;
    uint64_t bw_bytes = 1ull << 30;
    uint64_t chunk_mb = 0;     // weight chunks of at most this many MiB (0: the binding limit)
    std::string read_sizes;    // MiB sizes: time plain reads of rotated buffers of each size, then stop
    std::string read_shapes = "256x16";  // WGxITEMS shapes of those plain reads
  };
  static Opts o;
  mv->add_option("--formats", o.formats, "Comma-separated formats");
  mv->add_option("--shapes", o.shapes, "Comma-separated NxK (N output rows, K inputs)");
  mv->add_option("--batch", o.batches, "Comma-separated batch sizes (tokens)");
  mv->add_option("--hooks", o.hooks,
                 "Comma-separated hook sets, as the decoder uses them: store, acc (y += W x), rms (the RMSNorm "
                 "prologue), rope (RMSNorm and RoPE: the fused QKV), silu (RMSNorm, SiLU(gate x) * (up x): two "
                 "weights a call)");
  mv->add_option("--sweep", o.sweep, "Variants to time: wg=..;tpr=..;unroll=..;rpl=..;splits=..;sg=..;tokens=..;tile=..;i8=0,1;zi=0,1;cs=0,1;qs=0,1;pl=0,1;gx=0,1;bs=0,1;sp=0,1;ya=0,1;rl=0,1;probe=0..7 "
                  "(i8=1: int8 activations, i8=0: f32; unset: as the model takes them, int8 for integer formats of 2^22 (Q4_x, Q5_x, Q2_K to Q6_K, Q8_0) or 2^24 elements or more where the adapter has packed dot4; probe: timing-only kernels, 1 no x staging, 2 no lane loop, "
                  "3 neither, 4 weight loads only, 5 x read from global memory (int8), 6 loads as if rows were "
                  "stored step by step, 7 weight loads only with no staging: spec suffix .v2 to .v14; pl=1: the pipelined "
                  "lane loop, .v64; gx=1: x read from global memory, no staging, .v128; with i8=1 x is quantized first by a kernel of its own; bs=1: int8 sums biased to read as floats, .v256; sp=1: the constant-step lane loop two steps an iteration, .v512; ya=1: the Acc epilogue's old y read before the lane loop, .v1024; rl=1: the RMSNorm scale applied to the row sums, .v2048)");
  mv->add_option("--samples", o.samples, "Timed passes per case (median)");
  mv->add_option("--bandwidth-bytes", o.bw_bytes, "Bytes the streaming-read ceiling reads");
  mv->add_flag("--quick", o.quick, "Small shapes for a CPU adapter (SwiftShader)");
  mv->add_option("--max-chunk-mb", o.chunk_mb, "Split each weight into row chunks of at most this many MiB");
  mv->add_option("--read-sizes", o.read_sizes,
                 "Only time plain streaming reads of rotated buffers of these sizes (MiB, comma-separated)");
  mv->add_option("--read-shapes", o.read_shapes,
                 "With --read-sizes: plain-read shapes WGxITEMS (invocations per workgroup x coalesced vec4 "
                 "loads per invocation), comma-separated");
  mv->add_flag("--rows", o.rows, "Also time the row gather (embedding lookup) of `batch` random rows of each weight");
  mv->add_flag("--json", o.json, "Print JSON");
  mv->callback([&g] {
    auto ctx = make_context(g);
    if (!o.read_sizes.empty()) {
      // The read ceiling by buffer size, each rotated over copies filling 512 MiB.
      fmt::print("{:>10} {:>7} {:>6} {:>6} {:>8} {:>10} {:>10}\n", "MiB", "copies", "wg", "items", "groups",
                 "us", "GB/s");
      for (const auto& mb : split_list(o.read_sizes)) {
        // A size may be fractional (62.5), so shapes of a matvec's bytes can be matched.
        const uint64_t bytes = static_cast<uint64_t>(std::stod(mb) * (1 << 20));
        BQ_CHECK(bytes >= 256, "read size '{}' MiB is below 256 bytes", mb);
        const uint32_t copies = static_cast<uint32_t>(std::max<uint64_t>(1, (512ull << 20) / bytes));
        for (const auto& sh : split_list(o.read_shapes)) {
          auto x = sh.find('x');
          BQ_CHECK(x != std::string::npos, "read shape '{}' is not WGxITEMS", sh);
          ReadShape shape{static_cast<uint32_t>(std::stoul(sh.substr(0, x))),
                          static_cast<uint32_t>(std::stoul(sh.substr(x + 1)))};
          BQ_CHECK(shape.wg > 0 && (shape.wg & (shape.wg - 1)) == 0 && shape.items > 0,
                   "read shape '{}': WG must be a power of two and ITEMS at least 1", sh);
          auto r = measure_read_bandwidth(ctx, bytes, copies, shape);
          fmt::print("{:>10} {:>7} {:>6} {:>6} {:>8} {:>10.2f} {:>10.1f}\n", mb, copies, r.wg, r.items, r.groups,
                     r.us, r.gbps);
        }
      }
      return;
    }
    bench::MatvecBenchOptions bo;
    bo.max_chunk_bytes = o.chunk_mb << 20;
    bo.rows = o.rows;
    for (const auto& f : split_list(o.formats)) bo.kinds.push_back(parse_kind(f));
    if (o.quick) o.shapes = "256x256,512x1024";
    for (const auto& s : split_list(o.shapes)) {
      auto x = s.find('x');
      BQ_CHECK(x != std::string::npos, "shape '{}' is not NxK", s);
      bo.shapes.push_back({static_cast<uint32_t>(std::stoul(s.substr(0, x))),
                           static_cast<uint32_t>(std::stoul(s.substr(x + 1)))});
    }
    bo.hooks = split_list(o.hooks);
    for (const auto& h : bo.hooks) (void)bench::matvec_hooks(h, 128);  // a bad name fails before any timing
    bo.batches.clear();
    for (const auto& b : split_list(o.batches)) bo.batches.push_back(std::stoul(b));
    bo.samples = o.samples;
    if (o.quick) {
      bo.rotate_bytes = 1 << 20;
      bo.max_copies = 2;
      bo.calls_per_sample = 1;
      o.bw_bytes = std::min<uint64_t>(o.bw_bytes, 16 << 20);
    }
    // Variants: the cartesian product of the sweep's lists (default: the plan).
    std::vector<matvec::Options> vars = {{}};
    size_t p = 0;
    while (!o.sweep.empty() && p < o.sweep.size()) {
      size_t q = o.sweep.find(';', p);
      if (q == std::string::npos) q = o.sweep.size();
      std::string item = o.sweep.substr(p, q - p);
      p = q + 1;
      auto eq = item.find('=');
      BQ_CHECK(eq != std::string::npos, "sweep item '{}' is not key=v1,v2", item);
      const std::string key = item.substr(0, eq);
      std::vector<matvec::Options> next;
      for (const auto& v : vars)
        for (const auto& val : split_list(item.substr(eq + 1))) {
          matvec::Options n = v;
          const uint32_t u = std::stoul(val);
          if (key == "wg") n.wg = u;
          else if (key == "tpr") n.tpr = u;
          else if (key == "unroll") n.unroll = u;
          else if (key == "tokens") n.tokens = u;
          else if (key == "rpl") n.rpl = u;
          else if (key == "splits") n.splits = u;
          else if (key == "sg") n.subgroups = u != 0;
          else if (key == "tile") n.max_tile = u;
          else if (key == "i8") n.int8 = u != 0;
          else if (key == "zi") n.interleave = u != 0;
          else if (key == "probe") n.probe = u;
          else if (key == "cs") n.const_steps = u != 0;
          else if (key == "qs") n.quad_stage = u != 0;
          else if (key == "pl") n.pipeline = u != 0;
          else if (key == "gx") n.global_x = u != 0;
          else if (key == "bs") n.biased_sum = u != 0;
          else if (key == "sp") n.step_pairs = u != 0;
          else if (key == "ya") n.acc_early = u != 0;
          else if (key == "rl") n.rms_late = u != 0;
          else fail("unknown sweep key '{}'", key);
          next.push_back(n);
        }
      vars = next;
    }
    bo.variants = vars;
    bo.progress = !o.json;
    auto bw = measure_read_bandwidth(ctx, o.bw_bytes);
    if (!o.json)
      fmt::print("device {} | streaming read {:.1f} GB/s ({} MiB, {} samples, {})\n", ctx.adapter().name(),
                 bw.gbps, bw.bytes >> 20, bw.samples, bw.gpu_timestamps ? "timestamp queries" : "wall clock");
    auto rows = bench::bench_matvec(ctx, bo, bw);
    if (o.json) {
      nlohmann::json j;
      j["device"] = ctx.adapter().name();
      j["bandwidth_gbps"] = bw.gbps;
      j["bandwidth_bytes"] = bw.bytes;
      j["timestamps"] = bw.gpu_timestamps;
      for (const auto& r : rows)
        j["rows"].push_back({{"format", r.kind}, {"n", r.n}, {"k", r.k}, {"batch", r.m}, {"us", r.us},
                             {"bytes", r.bytes}, {"gbps", r.gbps}, {"ratio", r.ratio}, {"spec", r.spec},
                             {"hooks", r.hooks}, {"same_size_read_us", r.read_us}, {"op", r.rows ? "rows" : "matvec"},
                             {"error", r.error}});
      fmt::print("{}\n", j.dump(1));
      return;
    }
    fmt::print("\n{:<10} {:>13} {:>5} {:<5} {:>10} {:>10} {:>9} {:>7}  {}\n", "format", "n x k", "batch", "hooks", "us/call",
               "MB moved", "GB/s", "of bw", "kernel, then a plain read of the same bytes (its time as a share of the kernel's)");
    for (const auto& r : rows) {
      if (!r.error.empty()) {
        fmt::print("{:<10} {:>6}x{:<6} {:>5} {:<5}  error: {}\n", r.kind, r.n, r.k, r.m, r.hooks, r.error);
        continue;
      }
      if (r.rows) {  // a row gather moves little; its share of the bandwidth means little
        fmt::print("{:<10} {:>6}x{:<6} {:>5} {:<5} {:>10.2f} {:>10.4f} {:>9.1f} {:>7}  {}\n", r.kind, r.n, r.k, r.m, "rows", r.us,
                   r.bytes / 1e6, r.gbps, "-", r.spec);
        continue;
      }
      fmt::print("{:<10} {:>6}x{:<6} {:>5} {:<5} {:>10.2f} {:>10.2f} {:>9.1f} {:>6.1f}%  {}  read {:.2f} us ({:.0f}%)\n",
                 r.kind, r.n, r.k, r.m, r.hooks, r.us, r.bytes / 1e6, r.gbps, 100 * r.ratio, r.spec, r.read_us,
                 r.us > 0 ? 100 * r.read_us / r.us : 0.0);
    }
  });
}

}  // namespace
BQ_REGISTER_COMMAND(add_bench);
}  // namespace blockq::tools
