// fused_elementwise: several elementwise operators on same-shaped float arrays, run tile by
// tile so that every intermediate value stays in the cache: the inputs are read once and the
// output written once. Built by the graph's fuse_elementwise pass.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "janus/base/error.h"
#include "janus/ops/fused.h"

#include "../op_utils.h"
#include "../typed_attrs.h"

namespace janus::ops {

bool fusable(const OpDef& op) {
  if (op.fusion != FusionClass::kElementwise && op.fusion != FusionClass::kBroadcast) return false;
  if (op.outputs.size() != 1 || op.inputs.empty() || op.random || op.variadic ||
      !op.mutable_inputs.empty() || op.copy_lane || op.multi_device) {
    return false;
  }
  for (const AttrDef& a : op.attrs) {
    if (a.type != AttrType::kInt && a.type != AttrType::kFloat && a.type != AttrType::kBool) {
      return false;
    }
  }
  return op.kernel_for(DeviceType::kCPU) != nullptr;
}

std::string encode_fused_program(const std::vector<FusedStep>& steps) {
  std::string out;
  for (const FusedStep& s : steps) {
    std::vector<std::string> attrs, ins;
    for (const AttrValue& v : s.attrs.values()) attrs.push_back(attr_value_to_string(v));
    for (int i : s.inputs)
      ins.push_back(i >= 0 ? fmt::format("i{}", i) : fmt::format("t{}", -1 - i));
    out += fmt::format("{}{}({})[{}]", out.empty() ? "" : ";", s.op->name, fmt::join(attrs, ","),
                       fmt::join(ins, ","));
  }
  return out;
}

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

}  // namespace

std::vector<FusedStep> decode_fused_program(const std::string& program) {
  std::vector<FusedStep> steps;
  for (const std::string& text : split(program, ';')) {
    const size_t open = text.find('('), close = text.find(')'), lb = text.find('['),
                 rb = text.find(']');
    JANUS_CHECK(
        open != std::string::npos && close > open && lb == close + 1 && rb == text.size() - 1,
        ValueError, "fused_elementwise: step '{}' is not name(attrs)[inputs]", text);
    FusedStep step;
    const OpDef* op = find_op(text.substr(0, open));
    JANUS_CHECK(op != nullptr && fusable(*op), ValueError,
                "fused_elementwise: step '{}' names no fusable operator", text);
    step.op = op;
    const std::string attr_text = text.substr(open + 1, close - open - 1);
    const std::vector<std::string> attrs =
        attr_text.empty() ? std::vector<std::string>{} : split(attr_text, ',');
    JANUS_CHECK(attrs.size() == op->attrs.size(), ValueError,
                "fused_elementwise: step '{}' has {} attributes, '{}' takes {}", text, attrs.size(),
                op->name, op->attrs.size());
    try {
      for (size_t i = 0; i < attrs.size(); ++i) {
        switch (op->attrs[i].type) {
          case AttrType::kInt:
            step.attrs.values().push_back(int64_t{std::stoll(attrs[i])});
            break;
          case AttrType::kFloat:
            step.attrs.values().push_back(std::stod(attrs[i]));
            break;
          default:
            step.attrs.values().push_back(attrs[i] == "true");
            break;
        }
      }
    } catch (const std::logic_error&) {
      JANUS_THROW(ValueError, "fused_elementwise: step '{}' has a malformed attribute", text);
    }
    for (const std::string& in : split(text.substr(lb + 1, rb - lb - 1), ',')) {
      JANUS_CHECK(in.size() >= 2 && (in[0] == 'i' || in[0] == 't'), ValueError,
                  "fused_elementwise: step '{}' has a malformed input '{}'", text, in);
      const int k = std::stoi(in.substr(1));
      JANUS_CHECK(in[0] == 'i' || k < static_cast<int>(steps.size()), ValueError,
                  "fused_elementwise: step '{}' reads step {} before it runs", text, k);
      step.inputs.push_back(in[0] == 'i' ? k : -1 - k);
    }
    JANUS_CHECK(op->accepts_inputs(step.inputs.size()), ValueError,
                "fused_elementwise: step '{}' gives {} inputs to '{}'", text, step.inputs.size(),
                op->name);
    steps.push_back(std::move(step));
  }
  return steps;
}

namespace {

constexpr int64_t kTile = 4096;  // elements: a few tiles of float32 fit in L1

struct FusedAttrs {
  std::string program;
  static constexpr auto fields() { return std::tuple{field("program", &FusedAttrs::program)}; }
  static FusedAttrs from(const Attrs& attrs) { return read_attrs<FusedAttrs>(attrs); }
};

// Decoded programs by text (a compiled graph calls the same program over and over).
const std::vector<FusedStep>& program_of(const std::string& text) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::vector<FusedStep>>();
  std::lock_guard lock(mu);
  auto it = cache->find(text);
  if (it == cache->end()) it = cache->emplace(text, decode_fused_program(text)).first;
  return it->second;
}

std::vector<TensorSpec> infer_fused(const InferArgs& args) {
  const std::vector<FusedStep>& steps = program_of(FusedAttrs::from(args.attrs).program);
  const TensorSpec& first = args.inputs[0];
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    JANUS_CHECK(args.inputs[i].shape == first.shape && args.inputs[i].dtype == first.dtype,
                ShapeError,
                "fused_elementwise: input {} is {} {}, expected every input like input 0: {} {}", i,
                args.inputs[i].shape, dtype_name(args.inputs[i].dtype), first.shape,
                dtype_name(first.dtype));
  }
  JANUS_CHECK(first.dtype == DType::kFloat32 || first.dtype == DType::kFloat64, TypeError,
              "fused_elementwise: dtype {} is not supported, expected float32 or float64",
              dtype_name(first.dtype));
  for (const FusedStep& s : steps) {
    for (int i : s.inputs) {
      JANUS_CHECK(i < static_cast<int>(args.inputs.size()), ValueError,
                  "fused_elementwise: the program reads input {}, but {} inputs were given", i,
                  args.inputs.size());
    }
  }
  return {first};
}

// A view of `count` elements of a, from element `begin`.
NDArray view(const NDArray& a, int64_t begin, int64_t count) {
  return NDArray(a.storage(), Shape{count}, a.dtype(),
                 a.offset_bytes() + static_cast<size_t>(begin) * dtype_size(a.dtype()));
}

void fused_cpu(const KernelArgs& args) {
  const std::vector<FusedStep>& steps = program_of(FusedAttrs::from(args.attrs).program);
  const NDArray& out = args.out(0);
  const int64_t n = out.size();
  const DType dtype = out.dtype();
  const size_t esize = dtype_size(dtype);
  const RunContext one_thread{args.ctx.device, args.ctx.lane, 1};
  // Threads split the elements; each takes the tiles that start in its share.
  parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
    // This thread's scratch: one tile per step (the last step writes the output directly).
    const size_t scratch_bytes = static_cast<size_t>(kTile) * esize * steps.size();
    auto scratch = std::make_shared<Storage>(
        Storage{Block{::operator new (scratch_bytes, std::align_val_t{64}), scratch_bytes},
                out.device(), nullptr});
    struct Free {
      Storage* s;
      ~Free() { ::operator delete (s->block.ptr, std::align_val_t{64}); }
    } free_scratch{scratch.get()};
    const int64_t t0 = (lo + kTile - 1) / kTile, t1 = (hi + kTile - 1) / kTile;
    std::vector<NDArray> temps(steps.size());
    std::vector<NDArray> ins;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t begin = t * kTile, count = std::min(kTile, n - begin);
      for (size_t s = 0; s < steps.size(); ++s) {
        temps[s] = s + 1 == steps.size() ? view(out, begin, count)
                                         : NDArray(scratch, Shape{count}, dtype,
                                                   s * static_cast<size_t>(kTile) * esize);
      }
      for (size_t s = 0; s < steps.size(); ++s) {
        const FusedStep& step = steps[s];
        ins.clear();
        for (int i : step.inputs) {
          ins.push_back(i >= 0 ? view(args.in(static_cast<size_t>(i)), begin, count)
                               : temps[static_cast<size_t>(-1 - i)]);
        }
        step.op->kernel_for(DeviceType::kCPU)(
            KernelArgs{ins, std::span<const NDArray>(&temps[s], 1), step.attrs, one_thread, {}});
      }
    }
  });
}

JANUS_DEFINE_OP({
    .name = "fused_elementwise",
    .doc = "Several elementwise operators on same-shaped arrays in one pass over memory (built by "
           "the graph's fuse_elementwise pass).\n\n"
           "`program` lists the steps, e.g. \"exp()[i0];mul(t0,i1)\": each step names an "
           "elementwise operator, its int/float/bool attributes in order, and its inputs (iK: "
           "input K, tJ: the result of step J); the last step's result is the output. Not "
           "differentiable: the pass runs after gradients are built.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"program", AttrType::kString, std::nullopt, "the steps, see the doc"}},
    .attr_fields = attr_fields<FusedAttrs>(),
    .variadic = true,
    .infer = infer_fused,
    .kernels = {{DeviceType::kCPU, fused_cpu}},
    .not_differentiable = true,
    .fusion = FusionClass::kOpaque,
});

}  // namespace

}  // namespace janus::ops
