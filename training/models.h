// The models that `janus train` knows by name. Part of training/ (below tools/ and bench/).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "janus/nn/block.h"

namespace janus::training {

/// "mlp": Flatten, Dense(256, relu), Dense(10), the d2l.ai multilayer perceptron.
/// "lenet": LeNet-5 with ReLU and max pooling: Conv2D(6, 5x5, pad 2), pool, Conv2D(16, 5x5),
/// pool, Dense(120), Dense(84), Dense(10).
/// Unknown names are a ValueError listing the known ones.
std::shared_ptr<nn::Sequential> make_model(const std::string& name);
const std::vector<std::string>& model_names();

}  // namespace janus::training
