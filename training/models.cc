// Models by name.
#include "models.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"

namespace janus::training {

using Ints = std::vector<int64_t>;

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "lenet"};
  return names;
}

std::shared_ptr<nn::Sequential> make_model(const std::string& name) {
  auto net = std::make_shared<nn::Sequential>();
  if (name == "mlp") {
    net->add(std::make_shared<nn::Flatten>(), std::make_shared<nn::Dense>(256, "relu"),
             std::make_shared<nn::Dense>(10));
  } else if (name == "lenet") {
    net->add(std::make_shared<nn::Conv2D>(6, Ints{5}, Ints{1}, Ints{2}, Ints{1}, 1, "relu"),
             std::make_shared<nn::MaxPool2D>(Ints{2}),
             std::make_shared<nn::Conv2D>(16, Ints{5}, Ints{1}, Ints{0}, Ints{1}, 1, "relu"),
             std::make_shared<nn::MaxPool2D>(Ints{2}), std::make_shared<nn::Flatten>(),
             std::make_shared<nn::Dense>(120, "relu"), std::make_shared<nn::Dense>(84, "relu"),
             std::make_shared<nn::Dense>(10));
  } else {
    JANUS_THROW(ValueError, "unknown model '{}', expected one of: {}", name,
                fmt::join(model_names(), ", "));
  }
  return net;
}

}  // namespace janus::training
