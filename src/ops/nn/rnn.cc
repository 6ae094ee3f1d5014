// rnn(data, params, states): a whole multi-layer, optionally bidirectional recurrence over a
// sequence in one call, with its parameters packed in one vector: MXNet's fused RNN operator,
// which hybridized Gluon recurrent layers export, so that such models import and run for any
// sequence length. Inference only (no gradient): Janus's own recurrent layers (nn/rnn.h) are
// built of differentiable operators and train. The gates are those of nn/rnn.h (MXNet's).
//
// Per layer and direction, the input's contribution to every step is one product over the
// whole sequence ([T·N, C] · W_iᵀ); each step then adds h · W_hᵀ and applies the gates.
#include <cmath>
#include <string>
#include <vector>

#include "janus/ops/ops.h"

#include "../linalg/gemm.h"
#include "../unary/vector_math.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

struct Recurrence {
  int64_t gates = 0;   // per step: 1 (rnn_relu, rnn_tanh), 4 (lstm), 3 (gru)
  int64_t states = 0;  // 2 for lstm (h, c), else 1
  bool relu = false;   // rnn_relu
  bool lstm = false, gru = false;
};

Recurrence recurrence(const std::string& mode) {
  if (mode == "rnn_relu") return {1, 1, true, false, false};
  if (mode == "rnn_tanh") return {1, 1, false, false, false};
  if (mode == "lstm") return {4, 2, false, true, false};
  if (mode == "gru") return {3, 1, false, false, true};
  JANUS_THROW(ValueError, "rnn: mode '{}' is not one of 'rnn_relu', 'rnn_tanh', 'lstm', 'gru'",
              mode);
}

// The packed parameters' layout (MXNet's): every layer and direction's input-to-hidden weight
// [G·H, C_l] then hidden-to-hidden weight [G·H, H], in order of layer then direction; then
// their biases [G·H] each, in the same order. C_0 = C, C_l = D·H after.
struct Layout {
  int64_t t = 0, n = 0, c = 0, h = 0, layers = 0, dirs = 0;
  Recurrence r;
  int64_t input_size(int64_t layer) const { return layer == 0 ? c : dirs * h; }
  int64_t gh() const { return r.gates * h; }
  int64_t weights_size() const {
    int64_t total = 0;
    for (int64_t l = 0; l < layers; ++l) total += dirs * gh() * (input_size(l) + h);
    return total;
  }
  int64_t params_size() const { return weights_size() + layers * dirs * 2 * gh(); }
  // Offsets of layer l, direction d's W_i, W_h, b_i and b_h in the packed vector.
  int64_t w_i(int64_t l, int64_t d) const {
    int64_t off = 0;
    for (int64_t k = 0; k < l; ++k) off += dirs * gh() * (input_size(k) + h);
    return off + d * gh() * (input_size(l) + h);
  }
  int64_t w_h(int64_t l, int64_t d) const { return w_i(l, d) + gh() * input_size(l); }
  int64_t b_i(int64_t l, int64_t d) const { return weights_size() + (l * dirs + d) * 2 * gh(); }
  int64_t b_h(int64_t l, int64_t d) const { return b_i(l, d) + gh(); }
};

Layout layout_of(const Shape& data, const Attrs& attrs) {
  const RnnAttrs a = RnnAttrs::from(attrs);
  Layout s;
  s.r = recurrence(a.mode);
  s.t = data[0];
  s.n = data[1];
  s.c = data[2];
  s.h = a.state_size;
  s.layers = a.num_layers;
  s.dirs = a.bidirectional ? 2 : 1;
  return s;
}

std::vector<TensorSpec> infer_rnn(const InferArgs& args) {
  const TensorSpec& data = args.inputs[0];
  const TensorSpec& params = args.inputs[1];
  const TensorSpec& states = args.inputs[2];
  const RnnAttrs a = RnnAttrs::from(args.attrs);
  const Recurrence r = recurrence(a.mode);
  JANUS_CHECK(a.state_size > 0 && a.num_layers > 0, ValueError,
              "rnn: state_size {} and num_layers {}, expected both positive", a.state_size,
              a.num_layers);
  JANUS_CHECK(data.shape.ndim() == 3, ShapeError,
              "rnn: data has shape {}, expected 3 dimensions [sequence, batch, features]",
              data.shape);
  const Layout s = layout_of(data.shape, args.attrs);
  JANUS_CHECK(params.shape == Shape{s.params_size()}, ShapeError,
              "rnn: params has shape {}, expected [{}]: the packed weights and biases of {} "
              "layer{} of mode '{}'{} with {} input features and state size {}",
              params.shape, s.params_size(), s.layers, s.layers == 1 ? "" : "s", a.mode,
              s.dirs == 2 ? ", bidirectional," : "", s.c, s.h);
  const Shape want_states{r.states, s.layers * s.dirs, s.n, s.h};
  const Shape shared_states{r.states, s.layers * s.dirs, 1, s.h};
  JANUS_CHECK(states.shape == want_states || states.shape == shared_states, ShapeError,
              "rnn: states has shape {}, expected {} or, the same for every sequence, {}: [{}, "
              "layers x directions, batch, state size] ({})",
              states.shape, want_states, shared_states, r.states, r.lstm ? "h and c" : "h");
  JANUS_CHECK(data.dtype == params.dtype && data.dtype == states.dtype, TypeError,
              "rnn: data, params and states have dtypes {}, {} and {}, expected one dtype",
              data.dtype, params.dtype, states.dtype);
  JANUS_CHECK(data.dtype == DType::kFloat32 || data.dtype == DType::kFloat64, TypeError,
              "rnn: dtype {} is not supported, expected float32 or float64", data.dtype);
  return {TensorSpec{Shape{s.t, s.n, s.dirs * s.h}, data.dtype, data.device},
          TensorSpec{want_states, data.dtype, data.device}};
}

// The products of one layer and direction: every step's input part, and one step's hidden part.
GemmKey input_product(const Layout& s, int64_t layer) {
  return {s.t * s.n, s.input_size(layer), s.gh(), false, true};
}
GemmKey hidden_product(const Layout& s) { return {s.n, s.h, s.gh(), false, true}; }

void prepare_rnn(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  const Layout s = layout_of(args.inputs[0].shape, args.attrs);
  for (int64_t l = 0; l < s.layers; ++l) {
    if (uses_onednn(input_product(s, l), DType::kFloat32)) cached_gemm(input_product(s, l));
  }
  if (uses_onednn(hidden_product(s), DType::kFloat32)) cached_gemm(hidden_product(s));
}

// One product of the recurrence, its cached oneDNN primitive looked up once (float32), or loops.
template <typename T>
class Product {
 public:
  explicit Product(const GemmKey& key) : key_(key) {
    if constexpr (std::is_same_v<T, float>) {
      if (uses_onednn(key, DType::kFloat32)) gemm_ = &cached_gemm(key);
    }
  }
  void operator()(const T* a, const T* b, T* c) const {
    if (gemm_ != nullptr) return run_gemm(*gemm_, a, b, c);
    gemm_reference(a, b, c, key_);
  }

 private:
  GemmKey key_;
  const CachedGemm* gemm_ = nullptr;
};

using vmath::sigmoid;
using vmath::tanh;

template <typename T>
T act(bool relu, T x) {
  return relu ? (x > T(0) || std::isnan(x) ? x : T(0)) : tanh(x);  // relu keeps NaN
}

// One layer and direction over the sequence: x [T, N, C_l] in, the H features from d·H on of
// each step of y [T, N, D·H] out; h (and c) [N, H] carry the state in and out.
template <typename T>
void run_direction(const Layout& s, int64_t l, int64_t d, const T* x, const T* params, T* y, T* h,
                   T* c) {
  const int64_t n = s.n, hs = s.h, gh = s.gh();
  const T* wi = params + s.w_i(l, d);
  const T* wh = params + s.w_h(l, d);
  const T* bi = params + s.b_i(l, d);
  const T* bh = params + s.b_h(l, d);
  std::vector<T> xw(static_cast<size_t>(s.t * n * gh));
  std::vector<T> hw(static_cast<size_t>(n * gh));
  Product<T>(input_product(s, l))(x, wi, xw.data());
  const Product<T> hidden(hidden_product(s));
  const int64_t row = s.dirs * hs;  // y's features per (step, batch)
  for (int64_t step = 0; step < s.t; ++step) {
    const int64_t t = d == 0 ? step : s.t - 1 - step;
    hidden(h, wh, hw.data());
    for (int64_t b = 0; b < n; ++b) {
      const T* xg = xw.data() + (t * n + b) * gh;
      const T* hg = hw.data() + b * gh;
      T* hb = h + b * hs;
      for (int64_t j = 0; j < hs; ++j) {
        auto gate = [&](int64_t g) {
          return xg[g * hs + j] + bi[g * hs + j] + hg[g * hs + j] + bh[g * hs + j];
        };
        T out;
        if (s.r.lstm) {
          T& cb = c[b * hs + j];
          cb = sigmoid(gate(1)) * cb + sigmoid(gate(0)) * tanh(gate(2));
          out = sigmoid(gate(3)) * tanh(cb);
        } else if (s.r.gru) {
          const T rr = sigmoid(gate(0));
          const T z = sigmoid(gate(1));
          const T nn =
              tanh(xg[2 * hs + j] + bi[2 * hs + j] + rr * (hg[2 * hs + j] + bh[2 * hs + j]));
          out = (T(1) - z) * nn + z * hb[j];
        } else {
          out = act(s.r.relu, gate(0));
        }
        hb[j] = out;
        y[(t * n + b) * row + d * hs + j] = out;
      }
    }
  }
}

template <typename T>
void rnn_typed(const KernelArgs& args) {
  const Layout s = layout_of(args.in(0).shape(), args.attrs);
  const T* params = args.in(1).data<T>();
  const T* states_in = args.in(2).data<T>();
  T* y = args.out(0).data<T>();
  T* states_out = args.out(1).data<T>();
  const int64_t per_state = s.layers * s.dirs * s.n * s.h;  // one of h, c
  // States of batch 1 are every sequence's.
  const int64_t in_batch = args.in(2).shape()[2];
  for (int64_t row = 0; row < s.r.states * s.layers * s.dirs * s.n; ++row) {
    const T* from = states_in + (row / s.n * in_batch + (in_batch == 1 ? 0 : row % s.n)) * s.h;
    std::copy(from, from + s.h, states_out + row * s.h);
  }
  // Layer l reads layer l - 1's outputs; the layers between the first and the last alternate
  // between two buffers.
  std::vector<T> between[2];
  const T* in = args.in(0).data<T>();
  for (int64_t l = 0; l < s.layers; ++l) {
    std::vector<T>& buffer = between[l % 2];
    if (l + 1 < s.layers) buffer.resize(static_cast<size_t>(s.t * s.n * s.dirs * s.h));
    T* out = l + 1 == s.layers ? y : buffer.data();
    for (int64_t d = 0; d < s.dirs; ++d) {
      T* h = states_out + (l * s.dirs + d) * s.n * s.h;
      T* c = s.r.lstm ? h + per_state : nullptr;
      run_direction(s, l, d, in, params, out, h, c);
    }
    in = out;
  }
}

void rnn_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) return rnn_typed<double>(args);
  rnn_typed<float>(args);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "rnn",
    .doc = "A multi-layer recurrence (rnn_relu, rnn_tanh, lstm or gru; optionally "
           "bidirectional) over data [T, N, C] with packed parameters: MXNet's RNN operator, "
           "for inference.\n\n"
           "params packs, in order of layer then direction, each input-to-hidden weight "
           "[G·H, C_l] and hidden-to-hidden weight [G·H, H], then their biases [G·H] in the same "
           "order (C_0 = C, C_l = D·H after; G gates: 1, 1, 4 or 3). states [S, L·D, N, H] holds "
           "the initial h (and c, S = 2, for lstm); [S, L·D, 1, H] gives every sequence the same. "
           "Gives the last layer's outputs [T, N, D·H] "
           "(the directions' features side by side) and the final states, as states. The gates "
           "are MXNet's (nn/rnn.h). No gradient: train with nn::RecurrentLayer, whose "
           "parameters pack into this order.",
    .inputs = {"data", "params", "states"},
    .outputs = {"out", "states_out"},
    .attrs = {{"mode", AttrType::kString, std::string("lstm"),
               "'rnn_relu', 'rnn_tanh', 'lstm' or 'gru'"},
              {"state_size", AttrType::kInt, std::nullopt, "H, the features of a state"},
              {"num_layers", AttrType::kInt, int64_t{1}, "stacked layers"},
              {"bidirectional", AttrType::kBool, false,
               "each layer also runs the sequence backwards"}},
    .attr_fields = attr_fields<RnnAttrs>(),
    .infer = infer_rnn,
    .kernels = {{DeviceType::kCPU, rnn_cpu}},
    .prepare = prepare_rnn,
    .not_differentiable = true,
});

}  // namespace janus::ops
