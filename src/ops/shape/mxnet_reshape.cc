// mxnet_reshape(x, shape): reshape with MXNet 1.x's special codes (0, -1, -2, -3, -4), which
// depend on x's shape and so cannot be resolved when an MXNet graph is imported.
#include "mxnet_reshape.h"

#include <fmt/ranges.h>

#include "janus/base/error.h"
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {

Shape resolve_mxnet_reshape(const Shape& from, std::span<const int64_t> codes, bool reverse) {
  if (reverse) {
    std::vector<int64_t> dims(from.ndim());
    for (int i = 0; i < from.ndim(); ++i) dims[static_cast<size_t>(i)] = from[from.ndim() - 1 - i];
    const std::vector<int64_t> reversed_codes(codes.rbegin(), codes.rend());
    const Shape r = resolve_mxnet_reshape(Shape(std::move(dims)), reversed_codes, false);
    std::vector<int64_t> out(r.ndim());
    for (int i = 0; i < r.ndim(); ++i) out[static_cast<size_t>(i)] = r[r.ndim() - 1 - i];
    return Shape(std::move(out));
  }
  const auto fail = [&](std::string_view why) {
    JANUS_THROW(ShapeError, "mxnet_reshape: codes ({}) do not fit input shape {}: {}",
                fmt::join(codes, ", "), from, why);
  };
  std::vector<int64_t> out;
  int src = 0;
  int inferred = -1;
  const auto next_input = [&]() {
    if (src >= from.ndim()) fail("they consume more axes than the input has");
    return from[src++];
  };
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t code = codes[i];
    if (code > 0) {
      out.push_back(code);
      ++src;
    } else if (code == 0) {
      out.push_back(next_input());
    } else if (code == -1) {
      if (inferred >= 0) fail("more than one -1");
      inferred = static_cast<int>(out.size());
      out.push_back(1);
      ++src;
    } else if (code == -2) {
      while (src < from.ndim()) out.push_back(from[src++]);
    } else if (code == -3) {
      const int64_t a = next_input();
      out.push_back(a * next_input());
    } else if (code == -4) {
      if (i + 2 >= codes.size()) fail("-4 must be followed by two values");
      const int64_t d = next_input();
      int64_t a = codes[++i], b = codes[++i];
      if (a < -1 || b < -1 || (a == -1 && b == -1))
        fail("-4 splits into two values, one may be -1");
      if (a == -1) a = b == 0 ? 0 : d / b;
      if (b == -1) b = a == 0 ? 0 : d / a;
      if (a * b != d) fail(fmt::format("-4 cannot split extent {} into {} x {}", d, a, b));
      out.push_back(a);
      out.push_back(b);
    } else {
      fail(fmt::format("unknown code {}", code));
    }
  }
  if (inferred >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(i) != inferred) known *= out[i];
    }
    if (known == 0 || from.numel() % known != 0) fail("the -1 extent cannot be inferred");
    out[static_cast<size_t>(inferred)] = from.numel() / known;
  }
  const Shape result(std::move(out));
  if (result.numel() != from.numel()) {
    fail(fmt::format("the result {} has {} elements, the input {}", result, result.numel(),
                     from.numel()));
  }
  return result;
}

namespace {

std::vector<TensorSpec> infer_mxnet_reshape(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const ReshapeCodesAttrs a = ReshapeCodesAttrs::from(args.attrs);
  out.shape = resolve_mxnet_reshape(args.inputs[0].shape, a.shape, a.reverse);
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "mxnet_reshape",
    .doc = "The same elements in another shape given with MXNet 1.x's Reshape codes: a positive "
           "extent as it is, 0 copies the input's extent at that position, -1 is inferred, -2 "
           "copies the remaining input axes, -3 merges two input axes, -4 splits one into the "
           "two values that follow. Imported MXNet graphs use it where the target depends on "
           "the input's shape.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"shape", AttrType::kInts, std::nullopt, "target shape with MXNet's codes"},
              {"reverse", AttrType::kBool, false,
               "match the codes against the input's axes from the last (MXNet's reverse)"}},
    .attr_fields = attr_fields<ReshapeCodesAttrs>(),
    .infer = infer_mxnet_reshape,
    // Like reshape: in a compiled graph the planner usually gives the output the input's buffer.
    .kernels = {{DeviceType::kCPU, copy_all}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {reshape(g.dy(0), g.x(0).shape())};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
    .view_of = 0,
});

}  // namespace janus::ops
