// The arithmetic of a training step (and of inference), for the compute floors: each
// layer's multiply-adds per sample, and whether backward computes its input gradient (the first
// layer's input is the data, which needs none). The floor is those FLOPs at the compute peak
// (machine.h: one thread's oneDNN sgemm rate in CPU time, times the threads): no kernel does the
// products faster, and the elementwise layers, the optimizer and the data path only add time, so
// a training step cannot beat it (floor_ratio = time / floor >= 1).
#pragma once

#include <vector>

namespace bench {

struct LayerMacs {
  double macs;             // multiply-adds per sample in the forward product
  bool input_grad = true;  // backward also computes the layer's input gradient
};

/// FLOPs per sample of one training step: forward 2 macs, the weight gradient 2 macs, and the
/// input gradient 2 macs where backward computes it.
inline double training_flops_per_sample(const std::vector<LayerMacs>& layers) {
  double flops = 0;
  for (const LayerMacs& l : layers) flops += 2 * l.macs * (l.input_grad ? 3 : 2);
  return flops;
}

/// FLOPs per sample of inference (the forward products alone): 2 per multiply-add.
inline double inference_flops_per_sample(const std::vector<LayerMacs>& layers) {
  double flops = 0;
  for (const LayerMacs& l : layers) flops += 2 * l.macs;
  return flops;
}

/// The seed's MLP of the MXNet fixtures (tests/fixtures/mxnet/): 512 -> 256 -> 128 -> 2.
inline std::vector<LayerMacs> seed_mlp_layers() {
  return {{512.0 * 256, false}, {256.0 * 128}, {128.0 * 2}};
}

/// training/models.cc's mlp: 784 -> 256 -> 10.
inline std::vector<LayerMacs> mlp_layers() { return {{784.0 * 256, false}, {256.0 * 10}}; }

/// training/models.cc's lenet, and d2l's LeNet of the MXNet fixtures: conv 1->6 5x5 pad 2
/// (28x28 out), conv 6->16 5x5 (10x10 out), dense 400 -> 120 -> 84 -> 10.
inline std::vector<LayerMacs> lenet_layers() {
  return {{6.0 * 28 * 28 * 25, false},
          {16.0 * 10 * 10 * 6 * 25},
          {400.0 * 120},
          {120.0 * 84},
          {84.0 * 10}};
}

}  // namespace bench
