// `blockq quantize IN.gguf OUT.gguf --type q4_0`: re-quantizes the rank-2
// F32/F16/BF16 tensors whose row length fits the target block size with the
// reference quantizers; copies every other tensor and all metadata as is.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "gguf/gguf.hpp"
#include "quant/format.hpp"
#include "tools/commands.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

using gguf::GgufFile;
using gguf::GgufWriter;
using gguf::TensorInfo;

// llama.cpp's general.file_type value for a file mostly in `f` (the _M variant
// for k-quants); nullopt if it has none.
std::optional<uint32_t> file_type_of(Format f) {
  switch (f) {
    case Format::F32: return 0;
    case Format::F16: return 1;
    case Format::Q4_0: return 2;
    case Format::Q4_1: return 3;
    case Format::Q8_0: return 7;
    case Format::Q5_0: return 8;
    case Format::Q5_1: return 9;
    case Format::Q4_K: return 15;
    case Format::Q5_K: return 17;
    case Format::Q6_K: return 18;
    case Format::Q2_K: return 10;
    case Format::Q3_K: return 12;
    case Format::IQ4_NL: return 25;
    case Format::IQ4_XS: return 30;
    case Format::BF16: return 32;
  }
  return std::nullopt;
}

bool is_float(Format f) { return f == Format::F32 || f == Format::F16 || f == Format::BF16; }

// Converts one [rows, row_len] tensor, a bounded number of rows at a time.
std::vector<uint8_t> convert(const TensorInfo& t, std::span<const uint8_t> src, Format to) {
  const FormatTraits& from = traits(t.format);
  const FormatTraits& dst = traits(to);
  const uint64_t row_len = t.shape[0], rows = t.rows();
  const size_t src_row = row_bytes(t.format, row_len), dst_row = row_bytes(to, row_len);
  const uint64_t chunk_rows = std::max<uint64_t>(1, (uint64_t(1) << 22) / std::max<uint64_t>(row_len, 1));
  std::vector<uint8_t> out(size_t(rows) * dst_row);
  std::vector<float> buf;
  for (uint64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    uint64_t n = std::min(chunk_rows, rows - r0);
    buf.resize(size_t(n * row_len));
    from.dequantize(src.data() + r0 * src_row, buf.data(), buf.size());
    dst.quantize(buf.data(), out.data() + r0 * dst_row, buf.size());
  }
  return out;
}

struct Options {
  std::string in, out, type;
  bool verbose = false;
};

void run_quantize(const Options& o) {
  std::optional<Format> to = format_from_name(o.type);
  if (!to) fail("quantize: unknown --type '{}' (expected a format such as q4_0, q8_0, q4_K, f16)", o.type);
  std::error_code ec;
  if (std::filesystem::exists(o.out) && std::filesystem::equivalent(o.in, o.out, ec))
    fail("quantize: input and output are the same file: {}", o.out);

  GgufFile in = GgufFile::open(o.in);
  GgufWriter w;
  w.copy_metadata(in);
  const FormatTraits& dst = traits(*to);
  size_t converted = 0, copied = 0;
  uint64_t in_bytes = 0, out_bytes = 0;
  for (const TensorInfo& t : in.tensors()) {
    std::span<const uint8_t> src = in.tensor_data(t);
    in_bytes += t.nbytes;
    bool eligible = t.shape.size() == 2 && is_float(t.format) && t.format != *to &&
                    t.shape[0] % dst.block_elems == 0 && t.n_elems() > 0;
    if (eligible) {
      std::vector<uint8_t> bytes = convert(t, src, *to);
      out_bytes += bytes.size();
      if (o.verbose)
        fmt::print("  {:<40} {:>5} -> {:<5} [{}, {}]  {} -> {} bytes\n", t.name, traits(t.format).name, dst.name,
                   t.shape[0], t.shape[1], t.nbytes, bytes.size());
      w.add_tensor(t.name, t.shape, *to, std::move(bytes));
      ++converted;
    } else {
      out_bytes += t.nbytes;
      if (o.verbose) fmt::print("  {:<40} {:>5}    copied\n", t.name, traits(t.format).name);
      w.add_tensor_view(t.name, t.shape, t.format, src);
      ++copied;
    }
  }
  if (converted && w.find("general.file_type"))
    if (auto ft = file_type_of(*to)) w.set_u32("general.file_type", *ft);
  if (converted && dst.quantized && !w.find("general.quantization_version"))
    w.set_u32("general.quantization_version", 2);  // ggml's GGML_QNT_VERSION

  // Write beside the target, then rename: no half-written OUT on failure.
  std::string tmp = o.out + ".tmp";
  try {
    w.write(tmp);
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
  std::filesystem::rename(tmp, o.out, ec);
  if (ec) fail("quantize: cannot rename {} to {}: {}", tmp, o.out, ec.message());
  fmt::print("{}: {} tensors quantized to {}, {} copied; tensor data {} -> {} bytes ({:.1f} -> {:.1f} MiB)\n",
             o.out, converted, dst.name, copied, in_bytes, out_bytes, double(in_bytes) / (1 << 20),
             double(out_bytes) / (1 << 20));
}

void add_quantize(CLI::App& app, GlobalOptions&) {
  auto* cmd = app.add_subcommand("quantize", "Re-quantize a GGUF file's F32/F16/BF16 matrices");
  static Options o;
  cmd->add_option("in", o.in, "Input GGUF file")->required();
  cmd->add_option("out", o.out, "Output GGUF file")->required();
  cmd->add_option("--type", o.type, "Target format: q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, f16, bf16, f32")
      ->required();
  cmd->add_flag("-v,--verbose", o.verbose, "Print one line per tensor");
  cmd->callback([] { run_quantize(o); });
}

}  // namespace
BQ_REGISTER_COMMAND(add_quantize);
}  // namespace blockq::tools
