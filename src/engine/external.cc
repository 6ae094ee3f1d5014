// Arrays over memory owned by someone else: the release waits for the var like empty()'s.
#include "janus/engine/external.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "janus/base/error.h"
#include "janus/engine/engine.h"

namespace janus {

NDArray from_external(void* data, const Shape& shape, DType dtype, Device device,
                      std::function<void()> release) {
  check_device(device, "from_external");
  const size_t item = dtype_size(dtype);
  const int64_t numel = shape.numel();
  JANUS_CHECK(data != nullptr || numel == 0, ValueError,
              "from_external: null data for shape {} of {}", shape, dtype_name(dtype));
  JANUS_CHECK(reinterpret_cast<uintptr_t>(data) % item == 0, ValueError,
              "from_external: data at {} is not aligned to the {}-byte elements of {}", data, item,
              dtype_name(dtype));
  auto* storage =
      new Storage{Block{data, static_cast<size_t>(numel) * item}, device, engine().new_var()};
  // Held by pointer: the engine's release function has a small inline capacity.
  auto* owner = new std::function<void()>(std::move(release));
  auto on_last_handle = [owner](Storage* s) {
    engine().delete_var(s->var, [owner] {
      (*owner)();
      delete owner;
    });
    delete s;
  };
  return NDArray(std::shared_ptr<Storage>(storage, on_last_handle), shape, dtype);
}

}  // namespace janus
