// Recurrent cells and layers, composed of registered operators (see janus/nn/rnn.h).
#include "janus/nn/rnn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <regex>
#include <utility>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

// parts joined along `axis` by pairwise concat (a balanced tree: each element is copied
// log2(parts) times rather than once per later part).
NDArray concat_all(std::vector<NDArray> parts, int64_t axis) {
  JANUS_ASSERT(!parts.empty(), "rnn: concat_all of no arrays");
  while (parts.size() > 1) {
    std::vector<NDArray> next;
    for (size_t i = 0; i + 1 < parts.size(); i += 2) {
      next.push_back(concat(parts[i], parts[i + 1], axis));
    }
    if (parts.size() % 2 == 1) next.push_back(parts.back());
    parts = std::move(next);
  }
  return parts[0];
}

// Step t of seq along `axis` without that axis.
NDArray step_of(const NDArray& seq, int64_t axis, int64_t t) {
  return squeeze(slice_axis(seq, axis, t, t + 1), {axis});
}

// One step from the products i2h = W_i x + b_i and h2h = W_h h + b_h [N, G H] and the states
// {h, (c)} [N, H]: the new states (h' first, which is also the output).
std::vector<NDArray> recur(RNNMode mode, const NDArray& i2h, const NDArray& h2h,
                           const std::vector<NDArray>& states) {
  switch (mode) {
    case RNNMode::kRNNRelu:
      return {relu(i2h + h2h)};
    case RNNMode::kRNNTanh:
      return {tanh(i2h + h2h)};
    case RNNMode::kLSTM: {
      const std::vector<NDArray> g = split(i2h + h2h, 4, 1);  // i, f, c~, o
      NDArray c = sigmoid(g[1]) * states[1] + sigmoid(g[0]) * tanh(g[2]);
      NDArray h = sigmoid(g[3]) * tanh(c);
      return {std::move(h), std::move(c)};
    }
    case RNNMode::kGRU: {
      const std::vector<NDArray> x = split(i2h, 3, 1);  // r, z, n
      const std::vector<NDArray> s = split(h2h, 3, 1);
      const NDArray r = sigmoid(x[0] + s[0]);
      const NDArray z = sigmoid(x[1] + s[1]);
      const NDArray n = tanh(x[2] + r * s[2]);
      // (1 - z) n + z h = n + z (h - n)
      return {n + z * (states[0] - n)};
    }
  }
  JANUS_THROW(InternalError, "rnn: unknown mode {}", static_cast<int>(mode));
}

void check_hidden_size(int64_t hidden_size, const char* where) {
  JANUS_CHECK(hidden_size > 0, ValueError, "{}: hidden_size is {}, expected a positive number",
              where, hidden_size);
}

// "rnn", "lstm", "gru": the kind part of a block's name.
const char* block_prefix(RNNMode mode) {
  return mode == RNNMode::kLSTM ? "lstm" : mode == RNNMode::kGRU ? "gru" : "rnn";
}

// The i2h weight's input extent from the first input (deferred initialisation; the other
// parameters' shapes are known from the start), else a ShapeError naming the block when it
// differs.
void infer_input_size(const std::string& block, const ParameterPtr& i2h_weight, const NDArray& x) {
  const int64_t features = x.shape()[x.ndim() - 1];
  const int64_t expected = i2h_weight->shape()[1];
  JANUS_CHECK(expected == 0 || expected == features, ShapeError,
              "{}: input of shape {} has {} features, expected {} (i2h_weight {})", block,
              x.shape(), features, expected, i2h_weight->shape());
  if (i2h_weight->initialized()) return;
  i2h_weight->infer_shape(Shape{i2h_weight->shape()[0], features});
  i2h_weight->finish_deferred_init();
}

}  // namespace

const char* rnn_mode_name(RNNMode mode) {
  switch (mode) {
    case RNNMode::kRNNRelu:
      return "rnn_relu";
    case RNNMode::kRNNTanh:
      return "rnn_tanh";
    case RNNMode::kLSTM:
      return "lstm";
    case RNNMode::kGRU:
      return "gru";
  }
  return "?";
}

int64_t rnn_gates(RNNMode mode) {
  return mode == RNNMode::kLSTM ? 4 : mode == RNNMode::kGRU ? 3 : 1;
}

int64_t rnn_num_states(RNNMode mode) { return mode == RNNMode::kLSTM ? 2 : 1; }

RNNLayout parse_rnn_layout(const std::string& layout, const std::string& where) {
  if (layout == "TNC") return RNNLayout::kTNC;
  if (layout == "NTC") return RNNLayout::kNTC;
  JANUS_THROW(ValueError, "{}: layout '{}' is not supported, expected 'TNC' or 'NTC'", where,
              layout);
}

std::string rnn_param_name_from_mxnet(const std::string& name) {
  static const std::regex unfused(
      R"((^|.*\.)_unfused\.(\d+)\.(?:(l|r)_cell\.)?((?:i2h|h2h)_(?:weight|bias)|h2r_weight)$)");
  std::smatch m;
  if (!std::regex_match(name, m, unfused)) return "";
  const std::string dir = m[3].matched ? m[3].str() : "l";
  return fmt::format("{}{}{}_{}", m[1].str(), dir, m[2].str(), m[4].str());
}

// ---- cells ----

std::vector<NDArray> RecurrentCell::begin_state(int64_t batch_size, Device device) const {
  JANUS_CHECK(batch_size > 0, ValueError, "{}: begin_state batch_size is {}, expected > 0", name(),
              batch_size);
  std::vector<NDArray> out;
  for (const Shape& s : state_shapes(batch_size)) out.push_back(zeros(s, DType::kFloat32, device));
  return out;
}

void RecurrentCell::check_states(const std::vector<NDArray>& xs, int64_t n) const {
  const std::vector<Shape> shapes = state_shapes(n);
  JANUS_CHECK(xs.size() == shapes.size() + 1, ValueError,
              "{}: called with {} states, expected {} (begin_state gives them)", name(),
              xs.size() - 1, shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    JANUS_CHECK(xs[i + 1].shape() == shapes[i], ShapeError,
                "{}: state {} has shape {}, expected {} for a batch of {}", name(), i,
                xs[i + 1].shape(), shapes[i], n);
  }
}

std::vector<NDArray> RecurrentCell::unroll_steps(int64_t length, const std::vector<NDArray>& inputs,
                                                 RNNLayout layout) const {
  JANUS_CHECK(length > 0, ValueError, "{}: unroll length is {}, expected > 0", name(), length);
  const int64_t time_axis = layout == RNNLayout::kTNC ? 0 : 1;
  std::vector<NDArray> steps;
  if (inputs.size() == 1 && length > 1) {
    const NDArray& seq = inputs[0];
    JANUS_CHECK(seq.ndim() == 3 && seq.shape()[time_axis] == length, ShapeError,
                "{}: unroll of {} steps got inputs of shape {}, expected {} with T = {}", name(),
                length, seq.shape(), layout == RNNLayout::kTNC ? "[T, N, C]" : "[N, T, C]", length);
    for (int64_t t = 0; t < length; ++t) steps.push_back(step_of(seq, time_axis, t));
  } else if (inputs.size() == 1 && inputs[0].ndim() == 3) {
    JANUS_CHECK(inputs[0].shape()[time_axis] == 1, ShapeError,
                "{}: unroll of 1 step got inputs of shape {}, expected T = 1", name(),
                inputs[0].shape());
    steps.push_back(step_of(inputs[0], time_axis, 0));
  } else {
    JANUS_CHECK(static_cast<int64_t>(inputs.size()) == length, ValueError,
                "{}: unroll of {} steps got {} input arrays, expected {} (or one merged array)",
                name(), length, inputs.size(), length);
    steps = inputs;
  }
  return steps;
}

std::vector<NDArray> RecurrentCell::unroll_outputs(std::vector<NDArray> steps, RNNLayout layout,
                                                   bool merge_outputs) {
  if (!merge_outputs) return steps;
  const int64_t time_axis = layout == RNNLayout::kTNC ? 0 : 1;
  for (NDArray& y : steps) y = expand_dims(y, time_axis);
  return {concat_all(std::move(steps), time_axis)};
}

std::vector<NDArray> RecurrentCell::valid_masks(const NDArray& valid_length, int64_t n,
                                                int64_t length, Device device) const {
  if (!valid_length.defined()) return {};
  JANUS_CHECK(valid_length.shape() == Shape{n}, ShapeError,
              "{}: unroll valid_length has shape {}, expected [{}] (one length per sequence)",
              name(), valid_length.shape(), n);
  const NDArray lengths = reshape(cast(valid_length, DType::kFloat32), Shape{n, 1});
  std::vector<NDArray> masks;
  for (int64_t t = 0; t < length; ++t) {
    masks.push_back(
        cast(greater(lengths, full(Shape{1, 1}, static_cast<double>(t), DType::kFloat32, device)),
             DType::kFloat32));
  }
  return masks;
}

namespace {
// mask [N, 1] as [N, 1, ..., 1] for an array of `ndim` dimensions.
NDArray mask_like(const NDArray& mask, int64_t ndim) {
  if (ndim == 2) return mask;
  std::vector<int64_t> dims(static_cast<size_t>(ndim), 1);
  dims[0] = mask.shape()[0];
  return reshape(mask, Shape(std::move(dims)));
}
}  // namespace

void RecurrentCell::mask_step(const std::vector<NDArray>& masks, size_t t, NDArray& output,
                              std::vector<NDArray>& last, const std::vector<NDArray>& states) {
  if (masks.empty()) return;
  const NDArray& m = masks[t];
  // where, not a product: a padded step's inf or NaN must not leak into the zeros.
  output = where(mask_like(m, output.ndim()), output,
                 zeros(output.shape(), output.dtype(), output.device()));
  for (size_t i = 0; i < last.size(); ++i) {
    last[i] = where(mask_like(m, states[i].ndim()), states[i], last[i]);
  }
}

RecurrentCell::Unrolled RecurrentCell::unroll(int64_t length, const std::vector<NDArray>& inputs,
                                              std::vector<NDArray> states, RNNLayout layout,
                                              bool merge_outputs, const NDArray& valid_length) {
  const std::vector<NDArray> steps = unroll_steps(length, inputs, layout);
  const int64_t n = steps[0].shape()[0];
  if (states.empty()) states = begin_state(n, steps[0].device());
  const std::vector<NDArray> masks = valid_masks(valid_length, n, length, steps[0].device());
  std::vector<NDArray> last = states;
  Unrolled out;
  for (size_t t = 0; t < steps.size(); ++t) {
    std::vector<NDArray> xs{steps[t]};
    xs.insert(xs.end(), states.begin(), states.end());
    std::vector<NDArray> ys = (*this)(xs);
    states.assign(ys.begin() + 1, ys.end());
    mask_step(masks, t, ys[0], last, states);
    out.outputs.push_back(ys[0]);
  }
  out.states = masks.empty() ? std::move(states) : std::move(last);
  out.outputs = unroll_outputs(std::move(out.outputs), layout, merge_outputs);
  return out;
}

std::pair<NDArray, NDArray> RecurrentCell::gate_inputs(const std::vector<NDArray>& xs,
                                                       const ParameterPtr& i2h_weight,
                                                       const ParameterPtr& i2h_bias,
                                                       const ParameterPtr& h2h_weight,
                                                       const ParameterPtr& h2h_bias) const {
  JANUS_CHECK(!xs.empty(), ValueError, "{}: called without an input", name());
  const NDArray& x = xs[0];
  JANUS_CHECK(x.ndim() == 2, ShapeError, "{}: input has shape {}, expected [batch, features]",
              name(), x.shape());
  check_states(xs, x.shape()[0]);
  infer_input_size(name(), i2h_weight, x);
  const Device dev = x.device();
  // x [N, C] . i2h_weight [G H, C]^T -> [N, G H]; h [N, H] . h2h_weight [G H, H]^T -> [N, G H]
  return {fully_connected(x, i2h_weight->data(dev), i2h_bias->data(dev)),
          fully_connected(xs[1], h2h_weight->data(dev), h2h_bias->data(dev))};
}

GatedCell::GatedCell(RNNMode mode, int64_t hidden_size, int64_t input_size, RNNInit init)
    : RecurrentCell(std::string(block_prefix(mode)) + "cell"), mode_(mode), hidden_(hidden_size) {
  check_hidden_size(hidden_size, name().c_str());
  JANUS_CHECK(input_size >= 0, ValueError, "{}: input_size is {}, expected >= 0 (0: inferred)",
              name(), input_size);
  const int64_t gh = rnn_gates(mode) * hidden_size;
  i2h_weight_ = register_param("i2h_weight", Shape{gh, input_size}, std::move(init.i2h_weight));
  h2h_weight_ = register_param("h2h_weight", Shape{gh, hidden_size}, std::move(init.h2h_weight));
  i2h_bias_ = register_param("i2h_bias", Shape{gh}, std::move(init.i2h_bias));
  h2h_bias_ = register_param("h2h_bias", Shape{gh}, std::move(init.h2h_bias));
}

std::vector<Shape> GatedCell::state_shapes(int64_t batch_size) const {
  return std::vector<Shape>(rnn_num_states(mode_), Shape{batch_size, hidden_});
}

std::vector<NDArray> GatedCell::forward(const std::vector<NDArray>& xs) {
  const auto [i2h, h2h] = gate_inputs(xs, i2h_weight_, i2h_bias_, h2h_weight_, h2h_bias_);
  std::vector<NDArray> states(xs.begin() + 1, xs.end());
  std::vector<NDArray> next = recur(mode_, i2h, h2h, states);
  std::vector<NDArray> out{next[0]};
  out.insert(out.end(), next.begin(), next.end());
  return out;
}

std::string GatedCell::describe() const {
  const char* kind = mode_ == RNNMode::kLSTM  ? "LSTMCell"
                     : mode_ == RNNMode::kGRU ? "GRUCell"
                                              : "RNNCell";
  // Called from the constructor's checks too, before the parameters exist.
  const int64_t in = i2h_weight_ ? i2h_weight_->shape()[1] : 0;
  std::string act;
  if (mode_ == RNNMode::kRNNRelu) act = ", relu";
  if (mode_ == RNNMode::kRNNTanh) act = ", tanh";
  return fmt::format("{}({} -> {}{})", kind, in == 0 ? "None" : std::to_string(in), hidden_, act);
}

LSTMPCell::LSTMPCell(int64_t hidden_size, int64_t projection_size, int64_t input_size, RNNInit init,
                     InitializerPtr h2r_init)
    : RecurrentCell("lstmpcell"), hidden_(hidden_size), projection_(projection_size) {
  check_hidden_size(hidden_size, name().c_str());
  JANUS_CHECK(projection_size > 0, ValueError,
              "{}: projection_size is {}, expected a positive number", name(), projection_size);
  JANUS_CHECK(input_size >= 0, ValueError, "{}: input_size is {}, expected >= 0 (0: inferred)",
              name(), input_size);
  const int64_t gh = 4 * hidden_size;
  i2h_weight_ = register_param("i2h_weight", Shape{gh, input_size}, std::move(init.i2h_weight));
  h2h_weight_ =
      register_param("h2h_weight", Shape{gh, projection_size}, std::move(init.h2h_weight));
  h2r_weight_ =
      register_param("h2r_weight", Shape{projection_size, hidden_size}, std::move(h2r_init));
  i2h_bias_ = register_param("i2h_bias", Shape{gh}, std::move(init.i2h_bias));
  h2h_bias_ = register_param("h2h_bias", Shape{gh}, std::move(init.h2h_bias));
}

std::vector<Shape> LSTMPCell::state_shapes(int64_t batch_size) const {
  return {Shape{batch_size, projection_}, Shape{batch_size, hidden_}};
}

std::vector<NDArray> LSTMPCell::forward(const std::vector<NDArray>& xs) {
  const auto [i2h, h2h] = gate_inputs(xs, i2h_weight_, i2h_bias_, h2h_weight_, h2h_bias_);
  const Device dev = xs[0].device();
  // recur's LSTM step on {r, c} gives {h, c'}; h is then projected.
  const std::vector<NDArray> next = recur(RNNMode::kLSTM, i2h, h2h, {xs[1], xs[2]});
  const NDArray& w = h2r_weight_->data(dev);
  NDArray r = fully_connected(next[0], w, zeros(Shape{w.shape()[0]}, w.dtype(), dev));
  return {r, r, next[1]};
}

std::string LSTMPCell::describe() const {
  const int64_t in = i2h_weight_ ? i2h_weight_->shape()[1] : 0;
  return fmt::format("LSTMPCell({} -> {} -> {})", in == 0 ? "None" : std::to_string(in),
                     4 * hidden_, projection_);
}

SequentialRNNCell::SequentialRNNCell() : RecurrentCell("sequentialrnncell") {}

void SequentialRNNCell::add(std::shared_ptr<RecurrentCell> cell) {
  cells_.push_back(register_child(std::move(cell)));
}

const std::shared_ptr<RecurrentCell>& SequentialRNNCell::operator[](size_t i) const {
  JANUS_CHECK(i < cells_.size(), IndexError, "{}: index {} is out of range for {} cells", name(), i,
              cells_.size());
  return cells_[i];
}

std::vector<Shape> SequentialRNNCell::state_shapes(int64_t batch_size) const {
  std::vector<Shape> out;
  for (const auto& c : cells_) {
    const std::vector<Shape> s = c->state_shapes(batch_size);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

std::vector<NDArray> SequentialRNNCell::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(!cells_.empty(), ValueError, "{}: has no cells; add() some first", name());
  JANUS_CHECK(!xs.empty() && xs[0].ndim() == 2, ShapeError,
              "{}: input has shape {}, expected [batch, features]", name(),
              xs.empty() ? Shape{} : xs[0].shape());
  check_states(xs, xs[0].shape()[0]);
  NDArray x = xs[0];
  std::vector<NDArray> states;
  size_t next = 1;
  for (const auto& c : cells_) {
    std::vector<NDArray> in{x};
    const size_t k = c->num_states();
    in.insert(in.end(), xs.begin() + static_cast<std::ptrdiff_t>(next),
              xs.begin() + static_cast<std::ptrdiff_t>(next + k));
    next += k;
    std::vector<NDArray> ys = (*c)(in);
    x = ys[0];
    states.insert(states.end(), ys.begin() + 1, ys.end());
  }
  std::vector<NDArray> out{x};
  out.insert(out.end(), states.begin(), states.end());
  return out;
}

RecurrentCell::Unrolled SequentialRNNCell::unroll(int64_t length,
                                                  const std::vector<NDArray>& inputs,
                                                  std::vector<NDArray> states, RNNLayout layout,
                                                  bool merge_outputs, const NDArray& valid_length) {
  JANUS_CHECK(!cells_.empty(), ValueError, "{}: has no cells; add() some first", name());
  std::vector<NDArray> seq = unroll_steps(length, inputs, layout);
  const int64_t n = seq[0].shape()[0];
  if (states.empty()) states = begin_state(n, seq[0].device());
  const std::vector<Shape> shapes = state_shapes(n);
  JANUS_CHECK(states.size() == shapes.size(), ValueError,
              "{}: unroll got {} states, expected {} (begin_state gives them)", name(),
              states.size(), shapes.size());
  Unrolled out;
  size_t next = 0;
  for (const auto& c : cells_) {
    const size_t k = c->num_states();
    std::vector<NDArray> begin(states.begin() + static_cast<std::ptrdiff_t>(next),
                               states.begin() + static_cast<std::ptrdiff_t>(next + k));
    next += k;
    Unrolled u =
        c->unroll(length, seq, std::move(begin), layout, /*merge_outputs=*/false, valid_length);
    seq = std::move(u.outputs);
    out.states.insert(out.states.end(), u.states.begin(), u.states.end());
  }
  out.outputs = unroll_outputs(std::move(seq), layout, merge_outputs);
  return out;
}

BidirectionalCell::BidirectionalCell(std::shared_ptr<RecurrentCell> l_cell,
                                     std::shared_ptr<RecurrentCell> r_cell)
    : RecurrentCell("bidirectionalcell") {
  JANUS_CHECK(l_cell && r_cell, ValueError, "{}: l_cell and r_cell must both be cells", name());
  l_cell_ = register_child(std::move(l_cell), "l_cell");
  r_cell_ = register_child(std::move(r_cell), "r_cell");
}

std::vector<NDArray> BidirectionalCell::forward(const std::vector<NDArray>&) {
  JANUS_THROW(NotImplementedError, "{}: a bidirectional cell cannot be stepped; use unroll",
              name());
}

std::vector<Shape> BidirectionalCell::state_shapes(int64_t batch_size) const {
  std::vector<Shape> out = l_cell_->state_shapes(batch_size);
  const std::vector<Shape> r = r_cell_->state_shapes(batch_size);
  out.insert(out.end(), r.begin(), r.end());
  return out;
}

namespace {
// steps reversed within each sequence's first `lengths` [N, 1] (float32) steps, the steps past
// them left in place (MXNet's SequenceReverse): step t of sequence n is steps[len_n - 1 - t][n]
// for t < len_n. Built of where() over the pairs (t, s) that can match, O(T^2) operations.
std::vector<NDArray> reverse_valid(const std::vector<NDArray>& steps, const NDArray& lengths) {
  const auto t_len = static_cast<int64_t>(steps.size());
  std::vector<NDArray> out;
  for (int64_t t = 0; t < t_len; ++t) {
    NDArray r = steps[static_cast<size_t>(t)];
    for (int64_t s = 0; s + t < t_len; ++s) {
      const NDArray hit = equal(
          lengths, full(Shape{1, 1}, static_cast<double>(s + t + 1), DType::kFloat32, r.device()));
      r = where(mask_like(hit, r.ndim()), steps[static_cast<size_t>(s)], r);
    }
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

RecurrentCell::Unrolled BidirectionalCell::unroll(int64_t length,
                                                  const std::vector<NDArray>& inputs,
                                                  std::vector<NDArray> states, RNNLayout layout,
                                                  bool merge_outputs, const NDArray& valid_length) {
  std::vector<NDArray> steps = unroll_steps(length, inputs, layout);
  const int64_t n = steps[0].shape()[0];
  if (states.empty()) states = begin_state(n, steps[0].device());
  const size_t kl = l_cell_->num_states();
  JANUS_CHECK(states.size() == kl + r_cell_->num_states(), ValueError,
              "{}: unroll got {} states, expected {} (begin_state gives them)", name(),
              states.size(), kl + r_cell_->num_states());
  const std::vector<NDArray> masks = valid_masks(valid_length, n, length, steps[0].device());
  Unrolled l = l_cell_->unroll(length, steps, {states.begin(), states.begin() + kl}, layout, false,
                               valid_length);
  // The reverse direction reads each sequence's valid steps backwards (its padded steps, zeroed
  // in its outputs, stay where they are).
  const NDArray lengths =
      masks.empty() ? NDArray() : reshape(cast(valid_length, DType::kFloat32), Shape{n, 1});
  if (masks.empty()) {
    std::reverse(steps.begin(), steps.end());
  } else {
    steps = reverse_valid(steps, lengths);
  }
  Unrolled r = r_cell_->unroll(length, steps, {states.begin() + kl, states.end()}, layout, false,
                               valid_length);
  if (masks.empty()) {
    std::reverse(r.outputs.begin(), r.outputs.end());
  } else {
    r.outputs = reverse_valid(r.outputs, lengths);
  }
  Unrolled out;
  for (size_t t = 0; t < l.outputs.size(); ++t) {
    out.outputs.push_back(concat(l.outputs[t], r.outputs[t], 1));
  }
  out.outputs = unroll_outputs(std::move(out.outputs), layout, merge_outputs);
  out.states = std::move(l.states);
  out.states.insert(out.states.end(), r.states.begin(), r.states.end());
  return out;
}

std::string BidirectionalCell::describe() const {
  return fmt::format("BidirectionalCell(forward={}, backward={})", l_cell_->describe(),
                     r_cell_->describe());
}

DropoutCell::DropoutCell(double rate, std::vector<int64_t> axes)
    : RecurrentCell("dropoutcell"), rate_(rate), axes_(std::move(axes)) {
  JANUS_CHECK(rate >= 0 && rate < 1, ValueError, "{}: rate is {}, expected a value in [0, 1)",
              name(), rate);
}

NDArray DropoutCell::drop(const NDArray& x) const {
  if (rate_ == 0 || !autograd::is_training()) return x;
  if (axes_.empty()) return dropout(x, rate_, true);
  // One draw per position of the other axes, broadcast along `axes`.
  Shape mask_shape = x.shape();
  for (int64_t a : axes_) {
    const int64_t k = a < 0 ? a + x.ndim() : a;
    JANUS_CHECK(k >= 0 && k < x.ndim(), ValueError,
                "{}: dropout axis {} is out of range for an input of shape {}", name(), a,
                x.shape());
    mask_shape[static_cast<int>(k)] = 1;
  }
  return x * dropout(ones(mask_shape, x.dtype(), x.device()), rate_, true);
}

std::vector<NDArray> DropoutCell::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(xs.size() == 1, ValueError, "{}: called with {} states, expected none", name(),
              xs.empty() ? 0 : xs.size() - 1);
  return {drop(xs[0])};
}

RecurrentCell::Unrolled DropoutCell::unroll(int64_t length, const std::vector<NDArray>& inputs,
                                            std::vector<NDArray> states, RNNLayout layout,
                                            bool merge_outputs, const NDArray&) {
  JANUS_CHECK(states.empty(), ValueError, "{}: unroll got {} states, expected none", name(),
              states.size());
  std::vector<NDArray> steps = unroll_steps(length, inputs, layout);
  Unrolled out;
  if (merge_outputs) {
    const bool merged_in = inputs.size() == 1 && inputs[0].ndim() == 3;
    const NDArray seq =
        merged_in ? inputs[0] : unroll_outputs(std::move(steps), layout, /*merge_outputs=*/true)[0];
    out.outputs = {drop(seq)};
  } else {
    for (const NDArray& x : steps) out.outputs.push_back(drop(x));
  }
  return out;
}

std::string DropoutCell::describe() const {
  if (axes_.empty()) return fmt::format("DropoutCell(rate={})", rate_);
  return fmt::format("DropoutCell(rate={}, axes=({}))", rate_, fmt::join(axes_, ", "));
}

ResidualCell::ResidualCell(std::shared_ptr<RecurrentCell> base_cell)
    : RecurrentCell("residualcell") {
  JANUS_CHECK(base_cell != nullptr, ValueError, "{}: base_cell must be a cell", name());
  base_ = register_child(std::move(base_cell), "base_cell");
}

std::vector<Shape> ResidualCell::state_shapes(int64_t batch_size) const {
  return base_->state_shapes(batch_size);
}

std::vector<NDArray> ResidualCell::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(!xs.empty(), ValueError, "{}: called without an input", name());
  std::vector<NDArray> ys = (*base_)(xs);
  JANUS_CHECK(ys[0].shape() == xs[0].shape(), ShapeError,
              "{}: the base cell's output has shape {} and its input {}; a residual connection "
              "needs them equal",
              name(), ys[0].shape(), xs[0].shape());
  ys[0] = ys[0] + xs[0];
  return ys;
}

std::string ResidualCell::describe() const {
  return fmt::format("ResidualCell({})", base_->describe());
}

ZoneoutCell::ZoneoutCell(std::shared_ptr<RecurrentCell> base_cell, double zoneout_outputs,
                         double zoneout_states)
    : RecurrentCell("zoneoutcell"), p_outputs_(zoneout_outputs), p_states_(zoneout_states) {
  JANUS_CHECK(base_cell != nullptr, ValueError, "{}: base_cell must be a cell", name());
  JANUS_CHECK(dynamic_cast<BidirectionalCell*>(base_cell.get()) == nullptr, ValueError,
              "{}: a BidirectionalCell cannot be stepped, so it takes no zoneout; wrap the cells "
              "under it instead",
              name());
  for (double p : {zoneout_outputs, zoneout_states}) {
    JANUS_CHECK(p >= 0 && p < 1, ValueError,
                "{}: zoneout probability is {}, expected a value in [0, 1)", name(), p);
  }
  base_ = register_child(std::move(base_cell), "base_cell");
}

std::vector<Shape> ZoneoutCell::state_shapes(int64_t batch_size) const {
  return base_->state_shapes(batch_size);
}

namespace {
// `fresh` where a Bernoulli(1 - p) draw keeps it, else `old` (MXNet draws the mask as
// dropout(ones, p) != 0).
NDArray zoneout(const NDArray& fresh, const NDArray& old, double p) {
  const NDArray keep = dropout(ones(fresh.shape(), fresh.dtype(), fresh.device()), p, true);
  return where(keep, fresh, old);
}
}  // namespace

std::vector<NDArray> ZoneoutCell::step(const std::vector<NDArray>& xs, const NDArray& prev_output) {
  std::vector<NDArray> ys = (*base_)(xs);
  if (!autograd::is_training()) return ys;
  if (p_outputs_ > 0) {
    const NDArray prev = prev_output.defined() && prev_output.shape() == ys[0].shape()
                             ? prev_output
                             : zeros(ys[0].shape(), ys[0].dtype(), ys[0].device());
    ys[0] = zoneout(ys[0], prev, p_outputs_);
  }
  if (p_states_ > 0) {
    for (size_t i = 1; i < ys.size(); ++i) ys[i] = zoneout(ys[i], xs[i], p_states_);
  }
  return ys;
}

std::vector<NDArray> ZoneoutCell::forward(const std::vector<NDArray>& xs) {
  // A traced graph would hold the previous output as a constant.
  JANUS_CHECK(!(is_hybridized() && autograd::is_training() && p_outputs_ > 0), NotImplementedError,
              "{}: a hybridized zoneout cell cannot be stepped in training (its previous output "
              "lives between calls); use unroll, or do not hybridize it",
              name());
  std::vector<NDArray> ys = step(xs, prev_output_);
  prev_output_ = ys[0];
  return ys;
}

RecurrentCell::Unrolled ZoneoutCell::unroll(int64_t length, const std::vector<NDArray>& inputs,
                                            std::vector<NDArray> states, RNNLayout layout,
                                            bool merge_outputs, const NDArray& valid_length) {
  // Steps the base cell directly, the previous output carried here (so that a hybridized
  // zoneout cell unrolls too).
  const std::vector<NDArray> steps = unroll_steps(length, inputs, layout);
  if (states.empty()) states = begin_state(steps[0].shape()[0], steps[0].device());
  check_states(
      [&] {
        std::vector<NDArray> xs{steps[0]};
        xs.insert(xs.end(), states.begin(), states.end());
        return xs;
      }(),
      steps[0].shape()[0]);
  const std::vector<NDArray> masks =
      valid_masks(valid_length, steps[0].shape()[0], length, steps[0].device());
  std::vector<NDArray> last = states;
  Unrolled out;
  NDArray prev;
  for (size_t t = 0; t < steps.size(); ++t) {
    std::vector<NDArray> xs{steps[t]};
    xs.insert(xs.end(), states.begin(), states.end());
    std::vector<NDArray> ys = step(xs, prev);
    prev = ys[0];
    states.assign(ys.begin() + 1, ys.end());
    mask_step(masks, t, ys[0], last, states);
    out.outputs.push_back(ys[0]);
  }
  out.states = masks.empty() ? std::move(states) : std::move(last);
  out.outputs = unroll_outputs(std::move(out.outputs), layout, merge_outputs);
  reset();
  return out;
}

std::string ZoneoutCell::describe() const {
  return fmt::format("ZoneoutCell(p_out={}, p_state={}, {})", p_outputs_, p_states_,
                     base_->describe());
}

// ---- layers ----

RecurrentLayer::RecurrentLayer(RNNMode mode, int64_t hidden_size, RecurrentLayerOptions options)
    : Block(block_prefix(mode)), mode_(mode), hidden_(hidden_size), options_(std::move(options)) {
  check_hidden_size(hidden_size, name().c_str());
  JANUS_CHECK(options_.num_layers > 0, ValueError, "{}: num_layers is {}, expected >= 1", name(),
              options_.num_layers);
  JANUS_CHECK(options_.dropout >= 0 && options_.dropout < 1, ValueError,
              "{}: dropout is {}, expected a value in [0, 1)", name(), options_.dropout);
  JANUS_CHECK(options_.input_size >= 0, ValueError,
              "{}: input_size is {}, expected >= 0 (0: inferred)", name(), options_.input_size);
  const bool lstm = mode == RNNMode::kLSTM;
  const int64_t proj = options_.projection_size;
  JANUS_CHECK(proj >= 0, ValueError, "{}: projection_size is {}, expected >= 0 (0: none)", name(),
              proj);
  JANUS_CHECK(proj == 0 || lstm, ValueError, "{}: projection_size is only for an LSTM", name());
  JANUS_CHECK(proj < hidden_size, ValueError,
              "{}: projection_size {} must be smaller than hidden_size {}", name(), proj,
              hidden_size);
  const bool clip = options_.state_clip_min.has_value() || options_.state_clip_max.has_value();
  JANUS_CHECK(!clip || lstm, ValueError, "{}: state clipping is only for an LSTM", name());
  JANUS_CHECK(options_.state_clip_min.has_value() == options_.state_clip_max.has_value(),
              ValueError, "{}: state_clip_min and state_clip_max must be given together", name());
  JANUS_CHECK(!clip || *options_.state_clip_min <= *options_.state_clip_max, ValueError,
              "{}: state_clip_min {} is larger than state_clip_max {}", name(),
              *options_.state_clip_min, *options_.state_clip_max);
  const int64_t gh = rnn_gates(mode) * hidden_size;
  const int64_t out_size = proj > 0 ? proj : hidden_size;  // each direction's output width
  const int64_t dirs = options_.bidirectional ? 2 : 1;
  int64_t in = options_.input_size;
  const RNNInit& init = options_.init;
  for (int64_t l = 0; l < options_.num_layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string p = fmt::format("{}{}_", d == 0 ? 'l' : 'r', l);
      Direction dir{register_param(p + "i2h_weight", Shape{gh, in}, init.i2h_weight),
                    register_param(p + "h2h_weight", Shape{gh, out_size}, init.h2h_weight),
                    register_param(p + "i2h_bias", Shape{gh}, init.i2h_bias),
                    register_param(p + "h2h_bias", Shape{gh}, init.h2h_bias), nullptr};
      if (proj > 0) {
        dir.h2r_weight =
            register_param(p + "h2r_weight", Shape{proj, hidden_size}, options_.h2r_init);
      }
      directions_.push_back(std::move(dir));
    }
    in = out_size * dirs;
  }
}

std::vector<Shape> RecurrentLayer::state_shapes(int64_t batch_size) const {
  const int64_t dirs = options_.bidirectional ? 2 : 1;
  std::vector<Shape> out(rnn_num_states(mode_),
                         Shape{options_.num_layers * dirs, batch_size, hidden_});
  if (options_.projection_size > 0) {
    out[0] = Shape{options_.num_layers * dirs, batch_size, options_.projection_size};
  }
  return out;
}

std::vector<NDArray> RecurrentLayer::begin_state(int64_t batch_size, Device device) const {
  JANUS_CHECK(batch_size > 0, ValueError, "{}: begin_state batch_size is {}, expected > 0", name(),
              batch_size);
  std::vector<NDArray> out;
  for (const Shape& s : state_shapes(batch_size)) out.push_back(zeros(s, DType::kFloat32, device));
  return out;
}

std::vector<NDArray> RecurrentLayer::lstm_step(const Direction& d, const NDArray& i2h,
                                               const NDArray& h2h, const NDArray& c_prev) const {
  const std::vector<NDArray> g = split(i2h + h2h, 4, 1);  // i, f, c~, o
  NDArray c = sigmoid(g[1]) * c_prev + sigmoid(g[0]) * tanh(g[2]);
  if (options_.state_clip_min) {
    const double lo = *options_.state_clip_min;
    NDArray clipped = clip(c, lo, *options_.state_clip_max);
    if (options_.state_clip_nan) {
      // NaN != NaN: cuDNN's clipping without NaN propagation gives the lower bound there.
      clipped = where(equal(c, c), clipped, full(Shape{1, 1}, lo, c.dtype(), c.device()));
    }
    c = std::move(clipped);
  }
  NDArray h = sigmoid(g[3]) * tanh(c);
  if (d.h2r_weight) {
    // r = h . h2r_weight^T (no bias): [N, H] -> [N, P].
    const NDArray& w = d.h2r_weight->data(c.device());
    h = fully_connected(h, w, zeros(Shape{w.shape()[0]}, w.dtype(), w.device()));
  }
  return {std::move(h), std::move(c)};
}

std::vector<NDArray> RecurrentLayer::run_direction(const Direction& d, const NDArray& seq,
                                                   std::vector<NDArray> states, bool reverse,
                                                   const std::vector<NDArray>& valid) const {
  const Device dev = seq.device();
  const int64_t t_len = seq.shape()[0];
  const int64_t n = seq.shape()[1];
  const int64_t c = seq.shape()[2];
  const int64_t gh = rnn_gates(mode_) * hidden_;
  // The input products of every step at once: [T N, C] . [G H, C]^T -> [T N, G H].
  const NDArray i2h_all = reshape(fully_connected(reshape(seq, Shape{t_len * n, c}),
                                                  d.i2h_weight->data(dev), d.i2h_bias->data(dev)),
                                  Shape{t_len, n, gh});
  const NDArray& w_h = d.h2h_weight->data(dev);
  const NDArray& b_h = d.h2h_bias->data(dev);
  std::vector<NDArray> outputs(static_cast<size_t>(t_len));
  for (int64_t k = 0; k < t_len; ++k) {
    const int64_t t = reverse ? t_len - 1 - k : k;
    const NDArray i2h = step_of(i2h_all, 0, t);
    const NDArray h2h = fully_connected(states[0], w_h, b_h);
    std::vector<NDArray> next = mode_ == RNNMode::kLSTM ? lstm_step(d, i2h, h2h, states[1])
                                                        : recur(mode_, i2h, h2h, states);
    if (valid.empty()) {
      states = std::move(next);
      outputs[static_cast<size_t>(t)] = expand_dims(states[0], 0);
    } else {
      // Past a sequence's end its states stay and its output is zero.
      const NDArray& m = valid[static_cast<size_t>(t)];
      for (size_t i = 0; i < states.size(); ++i) states[i] = where(m, next[i], states[i]);
      outputs[static_cast<size_t>(t)] = expand_dims(next[0] * m, 0);
    }
  }
  std::vector<NDArray> out{concat_all(std::move(outputs), 0)};
  out.insert(out.end(), states.begin(), states.end());
  return out;
}

std::vector<NDArray> RecurrentLayer::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(!xs.empty(), ValueError, "{}: called without an input", name());
  const bool ntc = options_.layout == RNNLayout::kNTC;
  const NDArray& x = xs[0];
  JANUS_CHECK(x.ndim() == 3, ShapeError, "{}: input has shape {}, expected {} (layout {})", name(),
              x.shape(), ntc ? "[batch, time, features]" : "[time, batch, features]",
              ntc ? "NTC" : "TNC");
  const int64_t t_len = x.shape()[ntc ? 1 : 0];
  const int64_t n = x.shape()[ntc ? 0 : 1];
  const std::vector<Shape> shapes = state_shapes(n);
  const bool with_len = options_.use_sequence_length;
  const size_t num_states = xs.size() - 1 - (with_len ? 1 : 0);
  JANUS_CHECK(!with_len || xs.size() >= 2, ValueError,
              "{}: use_sequence_length is set, expected a sequence_length input after the data "
              "(and the states)",
              name());
  const bool given = num_states > 0;
  JANUS_CHECK(!given || num_states == shapes.size(), ValueError,
              "{}: called with {} states, expected {} (begin_state gives them)", name(), num_states,
              shapes.size());
  for (size_t i = 1; given && i <= num_states; ++i) {
    JANUS_CHECK(xs[i].shape() == shapes[i - 1], ShapeError,
                "{}: state {} has shape {}, expected {} (num_layers x directions, batch, hidden)",
                name(), i - 1, xs[i].shape(), shapes[i - 1]);
  }
  // valid[t]: [N, 1], 1 where step t is within sequence n.
  std::vector<NDArray> valid;
  if (with_len) {
    const NDArray& len = xs.back();
    JANUS_CHECK(len.shape() == Shape{n}, ShapeError,
                "{}: sequence_length has shape {}, expected [{}] (one length per sequence)", name(),
                len.shape(), n);
    const NDArray lengths = reshape(cast(len, DType::kFloat32), Shape{n, 1});
    for (int64_t t = 0; t < t_len; ++t) {
      valid.push_back(cast(
          greater(lengths, full(Shape{1, 1}, static_cast<double>(t), DType::kFloat32, x.device())),
          DType::kFloat32));
    }
  }
  const int64_t dirs = options_.bidirectional ? 2 : 1;
  // Layer 0 reads the input in each direction.
  for (int64_t d = 0; d < dirs; ++d) infer_input_size(name(), directions_[d].i2h_weight, x);
  const std::vector<NDArray> begin =
      given ? std::vector<NDArray>(xs.begin() + 1, xs.begin() + 1 + num_states)
            : begin_state(n, x.device());
  const bool drop = options_.dropout > 0 && autograd::is_training();
  NDArray seq = ntc ? transpose(x, {1, 0, 2}) : x;
  std::vector<std::vector<NDArray>> finals(begin.size());
  for (int64_t l = 0; l < options_.num_layers; ++l) {
    std::vector<NDArray> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t i = l * dirs + d;
      std::vector<NDArray> states;
      for (const NDArray& s : begin) states.push_back(step_of(s, 0, i));
      // A reverse direction over padded sequences reads each one's valid steps backwards:
      // running from T - 1 down with the states held until the last valid step does that.
      std::vector<NDArray> ys = run_direction(directions_[static_cast<size_t>(i)], seq,
                                              std::move(states), /*reverse=*/d == 1, valid);
      outs.push_back(ys[0]);
      for (size_t k = 0; k < begin.size(); ++k) finals[k].push_back(expand_dims(ys[k + 1], 0));
    }
    seq = dirs == 2 ? concat(outs[0], outs[1], 2) : outs[0];
    if (drop && l + 1 < options_.num_layers) seq = dropout(seq, options_.dropout, true);
  }
  std::vector<NDArray> out{ntc ? transpose(seq, {1, 0, 2}) : seq};
  if (!given) return out;
  for (std::vector<NDArray>& f : finals) out.push_back(concat_all(std::move(f), 0));
  return out;
}

std::string RecurrentLayer::describe() const {
  const char* kind = mode_ == RNNMode::kLSTM ? "LSTM" : mode_ == RNNMode::kGRU ? "GRU" : "RNN";
  const int64_t in = directions_.empty() ? 0 : directions_[0].i2h_weight->shape()[1];
  return fmt::format(
      "{}({} -> {}, {}{}{}{})", kind, in == 0 ? "None" : std::to_string(in), hidden_,
      options_.layout == RNNLayout::kNTC ? "NTC" : "TNC",
      options_.num_layers > 1 ? fmt::format(", num_layers={}", options_.num_layers) : "",
      options_.bidirectional ? ", bidirectional" : "", mode_ == RNNMode::kRNNRelu ? ", relu" : "");
}

}  // namespace janus::nn
