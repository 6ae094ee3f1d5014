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
  /// Gluon's lr_mult and wd_mult: the Trainer updates this parameter with the optimizer's
  /// learning rate and weight decay times these (1 by default; wd_mult 0: no weight decay).
  double lr_mult() const { return lr_mult_; }
  double wd_mult() const { return wd_mult_; }
  /// ValueError naming the parameter unless the factor is finite and >= 0.
  void set_lr_mult(double lr_mult);
  void set_wd_mult(double wd_mult);

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
  /// The same with one replica per device (data parallelism, Gluon's initialize(ctx=[...])):
  /// the value is drawn once, on the first device, and copied to the others, so every replica
  /// starts identical; each has its own gradient buffer. An empty list or a device named twice
  /// is a ValueError naming the parameter and the devices.
  void initialize(const InitializerPtr& default_init, const std::vector<Device>& devices,
                  bool force_reinit = false);
  /// Creates the deferred value once the shape is known (layers call it in forward).
  void finish_deferred_init();
  bool initialized() const { return !data_.empty(); }
  bool deferred() const { return data_.empty() && pending_init_ != nullptr; }

  /// The devices that hold a replica, in the order initialize() gave them (Gluon's list_ctx).
  const std::vector<Device>& devices() const { return devices_; }
  /// The first of devices().
  Device device() const { return devices_.front(); }

  /// The value: the replica on the first device. ValueError naming the parameter when it was not
  /// initialised, or when its shape is still unknown (run a forward pass first).
  const NDArray& data() const;
  /// The replica on `device` (what a layer called on an input there uses); DeviceError naming
  /// the parameter and both devices when it has none there.
  const NDArray& data(Device device) const;
  /// Every replica, in the order of devices().
  const std::vector<NDArray>& list_data() const;
  /// The gradient buffer of the first replica (written by backward). ValueError when grad_req
  /// is kNull.
  NDArray grad() const;
  /// The gradient buffer of the replica on `device`.
  NDArray grad(Device device) const;
  /// The gradient buffers of every replica, in the order of devices().
  std::vector<NDArray> list_grad() const;
  /// Moves the parameter to `devices` (Gluon's reset_ctx): each new replica is a copy of the
  /// current value; a deferred parameter will be created there. Gradients start at zero.
  void reset_devices(const std::vector<Device>& devices);
  void reset_device(Device device) { reset_devices({device}); }
  /// Replaces the value of every replica (e.g. loaded weights): same shape required (unknown
  /// extents are inferred), converted to the parameter's dtype; gradient buffers are attached
  /// again.
  void set_data(const NDArray& value);
  /// Gradient buffers back to zeros, in place (for grad_req kAdd): an array obtained from grad()
  /// before the call reads zeros after it.
  void zero_grad();
  void set_grad_req(autograd::GradReq req);

 private:
  // data_ = a detached copy of `value` per device, each with a gradient buffer.
  void set_replicas(const NDArray& value);

  std::string name_;
  Shape shape_;
  InitializerPtr init_;
  DType dtype_;
  autograd::GradReq grad_req_;
  double lr_mult_ = 1.0;
  double wd_mult_ = 1.0;
  // The replica of data_[i] lives on devices_[i]: never empty, distinct.
  std::vector<Device> devices_{cpu()};
  std::vector<NDArray> data_;    // empty until initialised
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
  /// One replica of every parameter per device (see Parameter::initialize).
  void initialize(const InitializerPtr& init, const std::vector<Device>& devices,
                  bool force_reinit = false);
  /// Parameter::reset_devices on every parameter.
  void reset_devices(const std::vector<Device>& devices);
  void zero_grad();
  void set_grad_req(autograd::GradReq req);
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, ParameterPtr>> items_;
};

}  // namespace janus::nn
