// janus._janus's key-value store (MXNet's mx.kv): the C++ KVStore of one key at a time; the
// Python module janus.kvstore spreads lists of keys and values over these calls. Every call
// pushes engine operations and returns (the GIL released while it pushes). Layer: python.
#include <string>
#include <vector>

#include "bindings.h"

namespace janus::python {
namespace {

using kvstore::Key;
using kvstore::KVStore;
using kvstore::KVStorePtr;

Key to_key(const py::handle& h) {
  if (py::isinstance<py::int_>(h)) return Key(h.cast<int64_t>());
  if (py::isinstance<py::str>(h)) return Key(h.cast<std::string>());
  JANUS_THROW(TypeError, "kvstore: a key is an int or a str, got {}",
              py::repr(h).cast<std::string>());
}

}  // namespace

void bind_kvstore(py::module_& m) {
  py::class_<KVStore, KVStorePtr>(m, "KVStore")
      .def_property_readonly("type", [](const KVStore& s) { return std::string(s.type()); })
      .def_property_readonly("rank", &KVStore::rank)
      .def_property_readonly("num_workers", &KVStore::num_workers)
      .def("_init",
           [](KVStore& s, py::handle key, const NDArray& value) {
             Key k = to_key(key);
             ReleaseGilInterruptibly release;
             s.init(k, value);
           })
      .def("_push",
           [](KVStore& s, py::handle key, const std::vector<NDArray>& values, int priority) {
             Key k = to_key(key);
             ReleaseGilInterruptibly release;
             s.push(k, values, priority);
           })
      .def("_pull",
           [](KVStore& s, py::handle key, const std::vector<NDArray>& outs, int priority) {
             Key k = to_key(key);
             ReleaseGilInterruptibly release;
             s.pull(k, outs, priority);
           })
      .def("_pushpull",
           [](KVStore& s, py::handle key, const std::vector<NDArray>& values,
              const std::vector<NDArray>& outs, int priority) {
             Key k = to_key(key);
             ReleaseGilInterruptibly release;
             s.pushpull(k, values, outs, priority);
           })
      .def("_broadcast",
           [](KVStore& s, py::handle key, const NDArray& value, const std::vector<NDArray>& outs,
              int priority) {
             Key k = to_key(key);
             ReleaseGilInterruptibly release;
             s.broadcast(k, value, outs, priority);
           })
      .def("_set_optimizer",
           [](KVStore& s, py::object name, py::object options) {
             s.set_optimizer(name.is_none() ? nullptr
                                            : to_optimizer(name.cast<std::string>(), options));
           })
      .def("__repr__",
           [](const KVStore& s) { return fmt::format("<KVStore {}>", std::string(s.type())); });
  m.def("kv_create", [](const std::string& name) { return kvstore::create(name); });
  m.def("kv_kinds", &kvstore::kinds);
}

}  // namespace janus::python
