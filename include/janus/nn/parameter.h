// Parameter: a named learnable array with a gradient, initialised on request (or, while its
// shape still has unknown extents, at the first forward: deferred initialisation). Layer: nn.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/core/ndarray.h"
#include "janus/nn/initializer.h"

namespace janus::nn {

class Parameter {
 public:
  /// `shape` may hold 0 for extents the owning layer infers from its first input.
  /// `init` (may be null) overrides the initializer passed to initialize(), as a layer's
  /// bias_initializer does in Gluon.
  Parameter(std::string name, Shape shape, InitializerPtr init = nullptr,
            DType dtype = DType::kFloat32, autograd::GradReq grad_req = autograd::GradReq::kWrite);

  const std::string& name() const { return name_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  autograd::GradReq grad_req() const { return grad_req_; }
  const InitializerPtr& init() const { return init_; }
  /// The device given to initialize().
  Device device() const { return device_; }

  /// True when no extent is unknown (0).
  bool shape_known() const;
  /// Fills the unknown extents from `shape`; a known extent that differs is a ShapeError naming
  /// the parameter and both shapes.
  void infer_shape(const Shape& shape);

  /// Creates the value with the parameter's own initializer, else `default_init`, on `device`
  /// and attaches a gradient buffer (unless grad_req is kNull). With unknown extents the
  /// creation waits for infer_shape + finish_deferred_init. An initialised parameter is left
  /// alone unless `force_reinit`.
  void initialize(const InitializerPtr& default_init, Device device = cpu(),
                  bool force_reinit = false);
  /// Creates the deferred value once the shape is known (layers call it in forward).
  void finish_deferred_init();
  bool initialized() const { return data_.defined(); }
  bool deferred() const { return !data_.defined() && pending_init_ != nullptr; }

  /// The value. ValueError naming the parameter when it was not initialised, or when its shape
  /// is still unknown (run a forward pass first).
  const NDArray& data() const;
  /// The gradient buffer (written by backward). ValueError when grad_req is kNull.
  NDArray grad() const;
  /// Replaces the value (e.g. loaded weights): same shape required (unknown extents are
  /// inferred), converted to the parameter's dtype; the gradient buffer is attached again.
  void set_data(const NDArray& value);
  /// Gradient buffer back to zeros (for grad_req kAdd).
  void zero_grad();
  void set_grad_req(autograd::GradReq req);

 private:
  std::string name_;
  Shape shape_;
  InitializerPtr init_;
  DType dtype_;
  autograd::GradReq grad_req_;
  Device device_ = cpu();
  NDArray data_;
  InitializerPtr pending_init_;  // set while initialisation is deferred
};

using ParameterPtr = std::shared_ptr<Parameter>;

/// Parameters by structural name ("0.weight", "features.2.bias"), in registration order.
class ParameterDict {
 public:
  void add(std::string name, ParameterPtr param);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  /// The parameter called `name`; KeyError-like ValueError listing the names otherwise.
  const ParameterPtr& at(const std::string& name) const;
  bool contains(const std::string& name) const;
  /// The parameters whose names match the regular expression `pattern` (fully, like
  /// Gluon's select=".*weight").
  ParameterDict select(const std::string& pattern) const;

  void initialize(const InitializerPtr& init, Device device = cpu(), bool force_reinit = false);
  void zero_grad();
  void set_grad_req(autograd::GradReq req);
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, ParameterPtr>> items_;
};

}  // namespace janus::nn
