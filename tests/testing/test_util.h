// Helpers shared by the test programs (not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "janus/core/device.h"
#include "janus/core/dtype.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"

namespace janus {

inline constexpr DType kAllDTypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                       DType::kBFloat16, DType::kInt32,   DType::kInt64,
                                       DType::kUInt8,    DType::kBool};

/// The message of the E that f() throws; a test failure (and "") when it throws nothing.
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

/// Switches the global engine for a scope; restores the kind in use when the scope began.
class ScopedEngine {
 public:
  explicit ScopedEngine(EngineKind kind, const EngineOptions& options = engine_options_from_env())
      : saved_(engine().kind()) {
    set_engine(kind, options);
  }
  ~ScopedEngine() { set_engine(saved_, engine_options_from_env()); }
  ScopedEngine(const ScopedEngine&) = delete;
  ScopedEngine& operator=(const ScopedEngine&) = delete;

 private:
  EngineKind saved_;
};

/// At least `n` logical CPU devices for a scope; the count in use before is restored after
/// every array of the scope is released (wait_all: memory of cpu(i) goes back while it exists).
class ScopedCpuDevices {
 public:
  explicit ScopedCpuDevices(int n) : saved_(num_cpu_devices()) {
    set_num_cpu_devices(std::max(saved_, n));
  }
  ~ScopedCpuDevices() {
    wait_all();
    set_num_cpu_devices(saved_);
  }
  ScopedCpuDevices(const ScopedCpuDevices&) = delete;
  ScopedCpuDevices& operator=(const ScopedCpuDevices&) = delete;

 private:
  int saved_;
};

}  // namespace janus
