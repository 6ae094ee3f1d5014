// Parameters and parameter dictionaries.
#include "janus/nn/parameter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "janus/base/error.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"

namespace janus::nn {

Parameter::Parameter(std::string name, Shape shape, InitializerPtr init, DType dtype,
                     autograd::GradReq grad_req)
    : name_(std::move(name)),
      shape_(std::move(shape)),
      init_(std::move(init)),
      dtype_(dtype),
      grad_req_(grad_req) {}

namespace {
double checked_mult(const std::string& param, const char* what, double value) {
  JANUS_CHECK(std::isfinite(value) && value >= 0, ValueError,
              "parameter '{}': {} is {}, expected a finite number >= 0", param, what, value);
  return value;
}
}  // namespace

void Parameter::set_lr_mult(double lr_mult) { lr_mult_ = checked_mult(name_, "lr_mult", lr_mult); }
void Parameter::set_wd_mult(double wd_mult) { wd_mult_ = checked_mult(name_, "wd_mult", wd_mult); }

bool Parameter::shape_known() const {
  for (int i = 0; i < shape_.ndim(); ++i) {
    if (shape_[i] == 0) return false;
  }
  return true;
}

void Parameter::infer_shape(const Shape& shape) {
  bool ok = shape.ndim() == shape_.ndim();
  for (int i = 0; ok && i < shape_.ndim(); ++i) ok = shape_[i] == 0 || shape_[i] == shape[i];
  JANUS_CHECK(ok, ShapeError, "parameter '{}' has shape {} (0: not known yet), cannot become {}",
              name_, shape_, shape);
  shape_ = shape;
}

void Parameter::initialize(const InitializerPtr& default_init, Device device, bool force_reinit) {
  initialize(default_init, std::vector<Device>{device}, force_reinit);
}

void Parameter::initialize(const InitializerPtr& default_init, const std::vector<Device>& devices,
                           bool force_reinit) {
  if (initialized() && !force_reinit) return;
  const InitializerPtr& init = init_ ? init_ : default_init;
  JANUS_CHECK(init != nullptr, ValueError,
              "parameter '{}': no initializer given and the parameter has none of its own", name_);
  check_devices(devices, fmt::format("parameter '{}'", name_));
  devices_ = devices;
  pending_init_ = init;
  data_.clear();
  if (shape_known()) finish_deferred_init();
}

void Parameter::finish_deferred_init() {
  if (initialized() || pending_init_ == nullptr) return;
  JANUS_CHECK(shape_known(), ShapeError,
              "parameter '{}': shape {} still has unknown (0) extents, cannot initialise it", name_,
              shape_);
  // Runs for real even when the first forward is being traced (hybridize).
  ops::ScopedTraceHook not_traced(nullptr);
  autograd::PauseScope pause;
  set_replicas(pending_init_->make(shape_, dtype_, devices_.front()));
  pending_init_ = nullptr;
}

void Parameter::set_replicas(const NDArray& value) {
  std::vector<NDArray> replicas;
  for (Device d : devices_) {
    NDArray v = value.device() == d ? value : copyto(value, d);
    replicas.push_back(autograd::detach(v));
    if (grad_req_ != autograd::GradReq::kNull) autograd::attach_grad(replicas.back(), grad_req_);
  }
  data_ = std::move(replicas);
}

const std::vector<NDArray>& Parameter::list_data() const {
  if (data_.empty()) {
    JANUS_CHECK(pending_init_ == nullptr, ValueError,
                "parameter '{}' has shape {} with unknown (0) extents, so its initialisation is "
                "deferred: run one forward pass (or give the layer its input size) first",
                name_, shape_);
    JANUS_THROW(ValueError,
                "parameter '{}' has not been initialised: call initialize() on the block or "
                "its parameters first",
                name_);
  }
  return data_;
}

const NDArray& Parameter::data() const { return list_data().front(); }

const NDArray& Parameter::data(Device device) const {
  const std::vector<NDArray>& replicas = list_data();
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i] == device) return replicas[i];
  }
  JANUS_THROW(DeviceError,
              "parameter '{}' has no replica on {}: it was initialised on [{}]; initialize() it "
              "on {} too, or reset_devices()",
              name_, device, fmt::join(devices_, ", "), device);
}

NDArray Parameter::grad() const { return grad(device()); }

NDArray Parameter::grad(Device device) const {
  JANUS_CHECK(grad_req_ != autograd::GradReq::kNull, ValueError,
              "parameter '{}' has grad_req null, so it has no gradient", name_);
  return autograd::grad(data(device));
}

std::vector<NDArray> Parameter::list_grad() const {
  std::vector<NDArray> out;
  for (Device d : devices_) out.push_back(grad(d));
  return out;
}

void Parameter::reset_devices(const std::vector<Device>& devices) {
  check_devices(devices, fmt::format("parameter '{}'", name_));
  const NDArray value = initialized() ? data() : NDArray();
  devices_ = devices;
  if (value.defined()) {
    autograd::PauseScope pause;
    set_replicas(value);
  }
}

void Parameter::set_data(const NDArray& value) {
  infer_shape(value.shape());
  autograd::PauseScope pause;
  pending_init_ = nullptr;
  // The replicas take a copy of `value`, which stays the caller's own array. Existing replicas
  // are written in place, as MXNet's set_data does, so that whoever holds them (a Trainer's
  // store, a compiled graph, the caller) sees the new value.
  if (!data_.empty() && data_.front().shape() == value.shape()) {
    const NDArray v = value.dtype() == dtype_ ? value : cast(value, dtype_);
    for (const NDArray& replica : data_) copy_into(replica, v);
    return;
  }
  set_replicas(value.dtype() == dtype_ ? copyto(value, value.device()) : cast(value, dtype_));
}

void Parameter::zero_grad() {
  if (grad_req_ == autograd::GradReq::kNull) return;
  // In place, as MXNet does: whoever holds a gradient (a Trainer's buckets, the user) sees it
  // zeroed, and nothing is allocated.
  for (const NDArray& replica : data_) {
    if (autograd::requires_grad(replica)) {
      fill_into(autograd::grad(replica), 0);
    } else {
      autograd::attach_grad(replica, grad_req_);
    }
  }
}

void Parameter::set_grad_req(autograd::GradReq req) {
  grad_req_ = req;
  for (const NDArray& replica : data_) autograd::attach_grad(replica, req);
}

void ParameterDict::add(std::string name, ParameterPtr param) {
  JANUS_CHECK(!contains(name), ValueError, "parameter name '{}' appears twice", name);
  items_.emplace_back(std::move(name), std::move(param));
}

bool ParameterDict::contains(const std::string& name) const {
  for (const auto& [n, p] : items_) {
    if (n == name) return true;
  }
  return false;
}

const ParameterPtr& ParameterDict::at(const std::string& name) const {
  for (const auto& [n, p] : items_) {
    if (n == name) return p;
  }
  JANUS_THROW(ValueError, "no parameter named '{}'; the parameters are: {}", name,
              fmt::join(names(), ", "));
}

ParameterDict ParameterDict::select(const std::string& pattern) const {
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error& e) {
    JANUS_THROW(ValueError, "select: '{}' is not a valid regular expression ({})", pattern,
                e.what());
  }
  ParameterDict out;
  for (const auto& [n, p] : items_) {
    if (std::regex_match(n, re)) out.add(n, p);
  }
  return out;
}

void ParameterDict::initialize(const InitializerPtr& init, Device device, bool force_reinit) {
  for (const auto& [n, p] : items_) p->initialize(init, device, force_reinit);
}

void ParameterDict::initialize(const InitializerPtr& init, const std::vector<Device>& devices,
                               bool force_reinit) {
  for (const auto& [n, p] : items_) p->initialize(init, devices, force_reinit);
}

void ParameterDict::reset_devices(const std::vector<Device>& devices) {
  for (const auto& [n, p] : items_) p->reset_devices(devices);
}

void ParameterDict::zero_grad() {
  for (const auto& [n, p] : items_) p->zero_grad();
}

void ParameterDict::set_grad_req(autograd::GradReq req) {
  for (const auto& [n, p] : items_) p->set_grad_req(req);
}

std::vector<std::string> ParameterDict::names() const {
  std::vector<std::string> out;
  for (const auto& [n, p] : items_) out.push_back(n);
  return out;
}

}  // namespace janus::nn
