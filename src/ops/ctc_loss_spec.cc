// Conformance specifications of ctc_loss and ctc_loss_backward: references that enumerate
// every path over the steps (C^T of them, so the samples are small) rather than run the
// forward-backward recursion the kernels use.
#include <cmath>
#include <random>
#include <vector>

#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// For each sequence n: P = the summed probability of the paths that collapse (repeats merged,
// blanks C - 1 dropped) to its label, and occupancy[t][k] = the part of P through class k at
// step t. Inputs as the operators': logits [T, N, C], labels [N, L], data_lengths [N],
// label_lengths [N].
struct Enumerated {
  std::vector<double> p;          // [N]
  std::vector<double> occupancy;  // [T, N, C]
  std::vector<double> softmax;    // [T, N, C]
};

Enumerated enumerate_paths(const std::vector<RefTensor>& in) {
  const RefTensor& x = in[0];
  const int64_t t_max = x.shape[0], n = x.shape[1], c = x.shape[2], l_max = in[1].shape[1];
  Enumerated e{std::vector<double>(static_cast<size_t>(n), 0.0),
               std::vector<double>(static_cast<size_t>(x.size()), 0.0),
               std::vector<double>(static_cast<size_t>(x.size()), 0.0)};
  for (int64_t t = 0; t < t_max; ++t) {
    for (int64_t b = 0; b < n; ++b) {
      double total = 0;
      for (int64_t k = 0; k < c; ++k) total += std::exp(x[(t * n + b) * c + k]);
      for (int64_t k = 0; k < c; ++k) {
        e.softmax[static_cast<size_t>((t * n + b) * c + k)] =
            std::exp(x[(t * n + b) * c + k]) / total;
      }
    }
  }
  for (int64_t b = 0; b < n; ++b) {
    const auto steps = static_cast<int64_t>(in[2][b]);
    std::vector<int64_t> label;
    for (int64_t j = 0; j < static_cast<int64_t>(in[3][b]); ++j) {
      label.push_back(static_cast<int64_t>(in[1][b * l_max + j]));
    }
    int64_t paths = 1;
    for (int64_t t = 0; t < steps; ++t) paths *= c;
    std::vector<int64_t> path(static_cast<size_t>(steps));
    for (int64_t id = 0; id < paths; ++id) {
      int64_t rest = id;
      for (int64_t t = 0; t < steps; ++t, rest /= c) path[static_cast<size_t>(t)] = rest % c;
      std::vector<int64_t> collapsed;
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t k = path[static_cast<size_t>(t)];
        if (k != c - 1 && (t == 0 || path[static_cast<size_t>(t - 1)] != k)) {
          collapsed.push_back(k);
        }
      }
      if (collapsed != label) continue;
      double prob = 1;
      for (int64_t t = 0; t < steps; ++t) {
        prob *= e.softmax[static_cast<size_t>((t * n + b) * c + path[static_cast<size_t>(t)])];
      }
      e.p[static_cast<size_t>(b)] += prob;
      for (int64_t t = 0; t < steps; ++t) {
        e.occupancy[static_cast<size_t>((t * n + b) * c + path[static_cast<size_t>(t)])] += prob;
      }
    }
  }
  return e;
}

std::vector<RefTensor> ref_ctc_loss(const std::vector<RefTensor>& in, const ops::Attrs&) {
  const Enumerated e = enumerate_paths(in);
  RefTensor loss = ref_zeros(Shape{in[0].shape[1]});
  for (int64_t b = 0; b < loss.size(); ++b) loss[b] = -std::log(e.p[static_cast<size_t>(b)]);
  return {loss};
}

// d(-log P)/dx[t, b, k] = softmax - occupancy / P within the sequence's steps, times dy[b].
std::vector<RefTensor> ref_ctc_loss_backward(const std::vector<RefTensor>& in, const ops::Attrs&) {
  const Enumerated e = enumerate_paths(in);
  const int64_t t_max = in[0].shape[0], n = in[0].shape[1], c = in[0].shape[2];
  RefTensor dx = ref_zeros(in[0].shape);
  for (int64_t t = 0; t < t_max; ++t) {
    for (int64_t b = 0; b < n; ++b) {
      if (t >= static_cast<int64_t>(in[2][b])) continue;
      for (int64_t k = 0; k < c; ++k) {
        const auto i = static_cast<size_t>((t * n + b) * c + k);
        dx[static_cast<int64_t>(i)] =
            (e.softmax[i] - e.occupancy[i] / e.p[static_cast<size_t>(b)]) * in[4][b];
      }
    }
  }
  return {dx};
}

// Labels in [0, C - 1) for C = 3 (so that repeats, which need a blank between, occur), data
// lengths {T, T - 1} and label lengths {2, 1}: every label has an alignment.
void fill_ctc_inputs(int index, RefTensor& t, std::mt19937& rng) {
  if (index == 1) {
    for (double& v : t.data) v = static_cast<double>(rng() % 2);
  } else if (index == 2) {
    t[0] = 3;
    t[1] = 2;
  } else if (index == 3) {
    t[0] = 2;
    t[1] = 1;
  }
}

const std::vector<DType> kCtcDtypes = {DType::kFloat64, DType::kInt32, DType::kInt32,
                                       DType::kInt32};

JANUS_OP_SPEC({.op = "ctc_loss",
               .reference = ref_ctc_loss,
               .samples = {{{{3, 2, 3}, {2, 2}, {2}, {2}}, {}, kCtcDtypes}},
               .make_input = fill_ctc_inputs});

JANUS_OP_SPEC({.op = "ctc_loss_backward",
               .reference = ref_ctc_loss_backward,
               .samples = {{{{3, 2, 3}, {2, 2}, {2}, {2}, {2}},
                            {},
                            {DType::kFloat64, DType::kInt32, DType::kInt32, DType::kInt32,
                             DType::kFloat64}}},
               .make_input = fill_ctc_inputs});

}  // namespace
}  // namespace janus::testing
