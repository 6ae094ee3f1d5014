// Block naming, parameter collection and Sequential.
#include "janus/nn/block.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "janus/base/error.h"

#include "hybrid_state.h"

namespace janus::nn {
namespace {

std::string unique_name(const std::string& prefix) {
  static std::mutex mu;
  static auto* counters = new std::map<std::string, int>();  // lives until exit
  std::lock_guard lock(mu);
  return fmt::format("{}{}", prefix, (*counters)[prefix]++);
}

}  // namespace

Block::Block(const std::string& prefix) : name_(unique_name(prefix)) {}

std::string Block::describe() const { return name_; }

std::string Block::summary() const {
  std::string out;
  summary_into("", 0, out);
  return out;
}

void Block::summary_into(const std::string& label, int depth, std::string& out) const {
  out += fmt::format("{:{}}{}{}\n", "", 2 * depth,
                     label.empty() ? "" : "(" + label + "): ", describe());
  for (const auto& [local, child] : children_) child->summary_into(local, depth + 1, out);
}

ParameterDict Block::collect_params(const std::string& select) const {
  ParameterDict all;
  collect_into("", all);
  return select.empty() ? all : all.select(select);
}

void Block::collect_into(const std::string& prefix, ParameterDict& out) const {
  for (const auto& [local, p] : params_) out.add(prefix + local, p);
  for (const auto& [local, child] : children_) child->collect_into(prefix + local + ".", out);
}

void Block::initialize(const InitializerPtr& init, Device device, bool force_reinit) {
  collect_params().initialize(init, device, force_reinit);
}

void Block::initialize(const InitializerPtr& init, const std::vector<Device>& devices,
                       bool force_reinit) {
  collect_params().initialize(init, devices, force_reinit);
}

void Block::reset_devices(const std::vector<Device>& devices) {
  collect_params().reset_devices(devices);
}

ParameterPtr Block::register_param(const std::string& local, Shape shape, InitializerPtr init,
                                   autograd::GradReq req) {
  for (const auto& [n, p] : params_) {
    JANUS_CHECK(n != local, ValueError, "{}: parameter '{}' is registered twice", name_, local);
  }
  auto param = std::make_shared<Parameter>(name_ + "_" + local, std::move(shape), std::move(init),
                                           DType::kFloat32, req);
  params_.emplace_back(local, param);
  return param;
}

void Block::add_child(std::shared_ptr<Block> child, std::string local) {
  JANUS_CHECK(child != nullptr, ValueError, "{}: a child block is null", name_);
  JANUS_CHECK(child.get() != this, ValueError, "{}: a block cannot be its own child", name_);
  if (local.empty()) local = std::to_string(children_.size());
  for (const auto& [n, c] : children_) {
    JANUS_CHECK(n != local, ValueError, "{}: child '{}' is registered twice", name_, local);
  }
  children_.emplace_back(std::move(local), std::move(child));
}

Sequential::Sequential() : Block("sequential") {}

Sequential& Sequential::add(BlockPtr block) {
  register_child(std::move(block));
  return *this;
}

std::vector<NDArray> Sequential::forward(const std::vector<NDArray>& xs) {
  std::vector<NDArray> ys = xs;
  for (const auto& [local, child] : children()) ys = (*child)(ys);
  return ys;
}

const BlockPtr& Sequential::operator[](size_t i) const {
  JANUS_CHECK(i < size(), IndexError, "{}: index {} is out of range for {} blocks", name(), i,
              size());
  return children()[i].second;
}

}  // namespace janus::nn
