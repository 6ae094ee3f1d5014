// Recurrent layers (Gluon's rnn.RNN, LSTM, GRU) and cells (RNNCell, LSTMCell, GRUCell, LSTMPCell,
// SequentialRNNCell, BidirectionalCell, DropoutCell, ResidualCell, ZoneoutCell), composed of
// registered operators (fully_connected, slice_axis, concat, sigmoid, tanh, elementwise), so that
// autograd, hybridize, export and the deploy runtime need nothing of their own. Parameter names,
// shapes and gate order are MXNet 1.9's, so that parameters saved by MXNet load and give its
// numbers. Layer: nn.
//
//   auto lstm = std::make_shared<nn::RecurrentLayer>(nn::RNNMode::kLSTM, /*hidden_size=*/100);
//   lstm->initialize(nn::Xavier());
//   NDArray out = (*lstm)(x);                                  // x [T, N, C] -> [T, N, 100]
//   std::vector<NDArray> ys = (*lstm)({x, h0, c0});            // {out, h_T, c_T}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "janus/nn/block.h"

namespace janus::nn {

/// The recurrence of a cell or layer. Gates (MXNet's and cuDNN's order):
///   kRNNRelu, kRNNTanh: h' = act(W_i x + b_i + W_h h + b_h)
///   kLSTM: i, f, c~, o = split(W_i x + b_i + W_h h + b_h, 4);
///          c' = sigmoid(f) c + sigmoid(i) tanh(c~); h' = sigmoid(o) tanh(c')
///   kGRU:  r, z, n from W_i x + b_i and W_h h + b_h split in 3 each;
///          r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r h_n),
///          h' = (1 - z) n + z h   (the reset gate scales h_n after its bias, as in MXNet)
enum class RNNMode { kRNNRelu, kRNNTanh, kLSTM, kGRU };

/// "rnn_relu", "rnn_tanh", "lstm", "gru".
const char* rnn_mode_name(RNNMode mode);
/// Gates per step: 1, 1, 4, 3.
int64_t rnn_gates(RNNMode mode);
/// States per step: 2 for LSTM ([h, c]), 1 otherwise ([h]).
int64_t rnn_num_states(RNNMode mode);

/// Time-major "TNC" or batch-major "NTC" sequences.
enum class RNNLayout { kTNC, kNTC };
/// "TNC" or "NTC"; anything else is a ValueError naming `where`.
RNNLayout parse_rnn_layout(const std::string& layout, const std::string& where);

/// The structural name of a RecurrentLayer's parameter that MXNet 1.9's save_parameters writes
/// under its unfused cells' name: "_unfused.1.r_cell.h2h_bias" -> "r1_h2h_bias" (bidirectional),
/// "enc._unfused.0.i2h_weight" -> "enc.l0_i2h_weight"; "" for any other name.
std::string rnn_param_name_from_mxnet(const std::string& name);

/// The initializers of a recurrent layer's or cell's parameters (null: the block's initialize()
/// argument; the biases default to zeros, as in Gluon).
struct RNNInit {
  InitializerPtr i2h_weight, h2h_weight;
  InitializerPtr i2h_bias = Zero();
  InitializerPtr h2h_bias = Zero();
};

/// A cell: one step of a recurrence. forward({x [N, C], states...}) gives {output [N, H],
/// new states...}; the states are those of begin_state().
class RecurrentCell : public Block {
 public:
  using Block::Block;
  using Block::forward;
  /// The states' shapes for `batch_size` sequences, e.g. {[N, H], [N, H]} for an LSTM cell.
  virtual std::vector<Shape> state_shapes(int64_t batch_size) const = 0;
  /// Zeros of state_shapes(batch_size) on `device`.
  std::vector<NDArray> begin_state(int64_t batch_size, Device device = cpu()) const;
  size_t num_states() const { return state_shapes(0).size(); }

  struct Unrolled {
    /// One array per step ([N, H]), or, merged, one [T, N, H] or [N, T, H] array (by layout).
    std::vector<NDArray> outputs;
    std::vector<NDArray> states;
  };
  /// Runs `length` steps over `inputs`: either one merged [T, N, C] / [N, T, C] array (by
  /// layout) or `length` arrays [N, C]. Empty `states` start from begin_state. A defined
  /// `valid_length` [N] (any numeric dtype) gives sequence n its first valid_length[n] steps:
  /// the outputs past them are zeros and the states returned are those after its last valid
  /// step (the begin states for a length of 0), as MXNet's unroll(valid_length=...); every
  /// step still runs on every sequence.
  virtual Unrolled unroll(int64_t length, const std::vector<NDArray>& inputs,
                          std::vector<NDArray> states = {}, RNNLayout layout = RNNLayout::kNTC,
                          bool merge_outputs = false, const NDArray& valid_length = NDArray());

 protected:
  /// The `length` steps [N, C] of unroll's `inputs` (one merged array or one per step).
  std::vector<NDArray> unroll_steps(int64_t length, const std::vector<NDArray>& inputs,
                                    RNNLayout layout) const;
  /// Step outputs [N, H] as unroll returns them: merged into one array along the layout's time
  /// axis, or as they are.
  static std::vector<NDArray> unroll_outputs(std::vector<NDArray> steps, RNNLayout layout,
                                             bool merge_outputs);
  /// Checks the number and shapes of the states in xs (after the input) for batch `n`.
  void check_states(const std::vector<NDArray>& xs, int64_t n) const;
  /// A gated step's pre-activations for xs = {x [N, C], h, ...}: {x . i2h_weight^T + i2h_bias,
  /// h . h2h_weight^T + h2h_bias}, each [N, G H], after checking x and the states and inferring
  /// C into i2h_weight.
  std::pair<NDArray, NDArray> gate_inputs(const std::vector<NDArray>& xs,
                                          const ParameterPtr& i2h_weight,
                                          const ParameterPtr& i2h_bias,
                                          const ParameterPtr& h2h_weight,
                                          const ParameterPtr& h2h_bias) const;
  /// unroll's `valid_length` as one mask per step, [N, 1] float32, 1 where step t < the
  /// sequence's length; empty when valid_length is undefined. A ShapeError unless it is [n].
  std::vector<NDArray> valid_masks(const NDArray& valid_length, int64_t n, int64_t length,
                                   Device device) const;
  /// Tracks unroll's results under `masks` (valid_masks; empty: nothing to do): after step t,
  /// its output becomes zeros where masks[t] is 0, and `last` (the states returned) takes the
  /// step's states where masks[t] is 1.
  static void mask_step(const std::vector<NDArray>& masks, size_t t, NDArray& output,
                        std::vector<NDArray>& last, const std::vector<NDArray>& states);
};

/// Gluon's RNNCell (activation "tanh" or "relu"), LSTMCell and GRUCell: parameters i2h_weight
/// [G H, C], h2h_weight [G H, H], i2h_bias and h2h_bias [G H] (G gates); input_size 0 = inferred
/// from the first input.
class GatedCell : public RecurrentCell {
 public:
  GatedCell(RNNMode mode, int64_t hidden_size, int64_t input_size = 0, RNNInit init = {});
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override;
  RNNMode mode() const { return mode_; }
  int64_t hidden_size() const { return hidden_; }

 private:
  RNNMode mode_;
  int64_t hidden_;
  ParameterPtr i2h_weight_, h2h_weight_, i2h_bias_, h2h_bias_;
};

/// MXNet's contrib LSTMPCell: an LSTM step whose h [N, H] is projected to r = h . h2r_weight^T
/// [N, P], the output and the recurrent input. Parameters i2h_weight [4 H, C], h2h_weight
/// [4 H, P], h2r_weight [P, H], i2h_bias and h2h_bias [4 H]; states {r [N, P], c [N, H]}.
class LSTMPCell : public RecurrentCell {
 public:
  LSTMPCell(int64_t hidden_size, int64_t projection_size, int64_t input_size = 0, RNNInit init = {},
            InitializerPtr h2r_init = nullptr);
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override;

 private:
  int64_t hidden_, projection_;
  ParameterPtr i2h_weight_, h2h_weight_, h2r_weight_, i2h_bias_, h2h_bias_;
};

/// Cells stacked: each one's output is the next one's input; the states are the cells' states
/// one after another (Gluon's SequentialRNNCell and HybridSequentialRNNCell).
class SequentialRNNCell : public RecurrentCell {
 public:
  SequentialRNNCell();
  void add(std::shared_ptr<RecurrentCell> cell);
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  /// Each cell unrolled over the whole sequence in turn (as MXNet does), so that a
  /// BidirectionalCell may be one of them.
  Unrolled unroll(int64_t length, const std::vector<NDArray>& inputs,
                  std::vector<NDArray> states = {}, RNNLayout layout = RNNLayout::kNTC,
                  bool merge_outputs = false, const NDArray& valid_length = NDArray()) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override { return "SequentialRNNCell"; }
  size_t size() const { return cells_.size(); }
  const std::shared_ptr<RecurrentCell>& operator[](size_t i) const;

 private:
  std::vector<std::shared_ptr<RecurrentCell>> cells_;
};

/// Gluon's BidirectionalCell: `l_cell` unrolled forward and `r_cell` over the reversed steps,
/// their outputs concatenated on the feature axis ([N, Hl + Hr] per step); the states are
/// l_cell's then r_cell's. Children "l_cell" and "r_cell" (MXNet's parameter names
/// "l_cell.i2h_weight", ...). It has no single step: forward() is a NotImplementedError.
class BidirectionalCell : public RecurrentCell {
 public:
  BidirectionalCell(std::shared_ptr<RecurrentCell> l_cell, std::shared_ptr<RecurrentCell> r_cell);
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  Unrolled unroll(int64_t length, const std::vector<NDArray>& inputs,
                  std::vector<NDArray> states = {}, RNNLayout layout = RNNLayout::kNTC,
                  bool merge_outputs = false, const NDArray& valid_length = NDArray()) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override;

 private:
  std::shared_ptr<RecurrentCell> l_cell_, r_cell_;
};

/// Gluon's DropoutCell: dropout of rate `rate` on the input in training (identity otherwise),
/// no states, no parameters. `axes`: the axes along which one mask is shared (none: each
/// element its own draw). As in MXNet, unroll with merged outputs drops the whole [T, N, C] /
/// [N, T, C] sequence at once (so the axes count in its dimensions, the time axis included),
/// returns the states it was given, and ignores valid_length (padded steps are not zeroed).
class DropoutCell : public RecurrentCell {
 public:
  explicit DropoutCell(double rate, std::vector<int64_t> axes = {});
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  Unrolled unroll(int64_t length, const std::vector<NDArray>& inputs,
                  std::vector<NDArray> states = {}, RNNLayout layout = RNNLayout::kNTC,
                  bool merge_outputs = false, const NDArray& valid_length = NDArray()) override;
  std::vector<Shape> state_shapes(int64_t) const override { return {}; }
  std::string describe() const override;

 private:
  NDArray drop(const NDArray& x) const;

  double rate_;
  std::vector<int64_t> axes_;
};

/// Gluon's ResidualCell: the base cell's step with its input added to its output (the output
/// and input widths must agree); the base cell's states. Child "base_cell".
class ResidualCell : public RecurrentCell {
 public:
  explicit ResidualCell(std::shared_ptr<RecurrentCell> base_cell);
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override;

 private:
  std::shared_ptr<RecurrentCell> base_;
};

/// Gluon's ZoneoutCell: in training, each element of the base cell's output keeps its previous
/// step's value with probability `zoneout_outputs` (zeros before the first step), and each
/// element of each state keeps its old value with probability `zoneout_states`; outside
/// training it is the base cell. The previous output lives in the cell between steps: unroll
/// starts from zeros, reset() clears it for steps called one by one (a hybridized zoneout cell
/// unrolls but refuses single steps in training). Child "base_cell".
class ZoneoutCell : public RecurrentCell {
 public:
  ZoneoutCell(std::shared_ptr<RecurrentCell> base_cell, double zoneout_outputs,
              double zoneout_states);
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  Unrolled unroll(int64_t length, const std::vector<NDArray>& inputs,
                  std::vector<NDArray> states = {}, RNNLayout layout = RNNLayout::kNTC,
                  bool merge_outputs = false, const NDArray& valid_length = NDArray()) override;
  std::vector<Shape> state_shapes(int64_t batch_size) const override;
  std::string describe() const override;
  void reset() { prev_output_ = NDArray(); }

 private:
  // One step from xs {x, states...} after `prev_output` (undefined: zeros).
  std::vector<NDArray> step(const std::vector<NDArray>& xs, const NDArray& prev_output);

  std::shared_ptr<RecurrentCell> base_;
  double p_outputs_, p_states_;
  NDArray prev_output_;
};

struct RecurrentLayerOptions {
  int64_t num_layers = 1;
  RNNLayout layout = RNNLayout::kTNC;
  /// Dropout on the outputs of each layer but the last, in training only.
  double dropout = 0;
  bool bidirectional = false;
  /// The features of the input; 0 = inferred from the first input.
  int64_t input_size = 0;
  RNNInit init;
  /// LSTM only: P > 0 projects each step's h [N, H] to r = h . h2r_weight^T [N, P] (LSTMP,
  /// parameters {l,r}{layer}_h2r_weight [P, H]); r is the output, the recurrent input and the
  /// h state ([num_layers D, N, P]); c stays [num_layers D, N, H].
  int64_t projection_size = 0;
  InitializerPtr h2r_init;
  /// LSTM only: the cell state clipped to [min, max] after each step (both or neither given);
  /// with state_clip_nan a NaN there becomes min, else it propagates (cuDNN's clipping, which
  /// MXNet's GPU LSTM uses).
  std::optional<double> state_clip_min, state_clip_max;
  bool state_clip_nan = false;
  /// forward takes a last input sequence_length [N] (any numeric dtype): sequence n is valid
  /// for its first sequence_length[n] steps; outputs past them are zeros, final states are
  /// those of the last valid step, and a reverse direction runs over the valid steps only
  /// (cuDNN's padded sequences, as MXNet's use_sequence_length).
  bool use_sequence_length = false;
};

/// Gluon's rnn.RNN, LSTM and GRU: `num_layers` layers of a recurrence over whole sequences,
/// each in one direction or two (outputs concatenated on the feature axis). Parameters
/// {l,r}{layer}_{i2h,h2h}_{weight,bias} as in MXNet ("l0_i2h_weight", "r0_h2h_bias").
/// forward({x}) gives {out}; forward({x, states...}) gives {out, final states...}, each with
/// sequence_length appended when use_sequence_length. x is
/// [T, N, C] (TNC) or [N, T, C] (NTC); out [T, N, D H] or [N, T, D H]; each state
/// [num_layers D, N, H] (D = 2 if bidirectional), layer-major: l0, r0, l1, r1, ...
class RecurrentLayer : public Block {
 public:
  RecurrentLayer(RNNMode mode, int64_t hidden_size, RecurrentLayerOptions options = {});
  using Block::forward;
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  std::string describe() const override;
  /// The states' shapes for `batch_size` sequences: [num_layers D, N, H], one or two (LSTM).
  std::vector<Shape> state_shapes(int64_t batch_size) const;
  /// Zeros of state_shapes(batch_size) on `device`.
  std::vector<NDArray> begin_state(int64_t batch_size, Device device = cpu()) const;
  RNNMode mode() const { return mode_; }
  const RecurrentLayerOptions& options() const { return options_; }

 private:
  struct Direction {
    ParameterPtr i2h_weight, h2h_weight, i2h_bias, h2h_bias, h2r_weight;
  };
  // One layer in one direction over seq [T, N, C] from states {h [N, H], (c)}: the outputs
  // [T, N, H] and the final states. `valid` (with use_sequence_length): one [N, 1] float mask
  // per step, 1 where the step is within the sequence.
  std::vector<NDArray> run_direction(const Direction& d, const NDArray& seq,
                                     std::vector<NDArray> states, bool reverse,
                                     const std::vector<NDArray>& valid) const;
  // One LSTM step with the layer's state clipping and projection: {h (or r), c}.
  std::vector<NDArray> lstm_step(const Direction& d, const NDArray& i2h, const NDArray& h2h,
                                 const NDArray& c_prev) const;

  RNNMode mode_;
  int64_t hidden_;
  RecurrentLayerOptions options_;
  std::vector<Direction> directions_;  // layer-major: l0, r0, l1, r1, ...
};

}  // namespace janus::nn
