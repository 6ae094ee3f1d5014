// The extension module janus._janus: errors, devices, the engine's waits, random seeds and
// autograd scopes; arrays and operators are in ndarray.cc, blocks and training in gluon.cc.
// The Python package (python/janus) gives these MXNet's names. Layer: python.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/functional.h>

#include "janus/engine/fork.h"

#include "bindings.h"

namespace janus::python {
namespace {

// The Python classes of Janus's errors, set by janus/base.py at import (_set_error_types).
// Leaked on purpose: they must outlive every translation, and the interpreter's finalisation
// must not run their destructors after it has gone.
struct ErrorTypes {
  py::object base, shape, type, value, index, device, not_implemented, io, format, trace, engine,
      internal;
};
ErrorTypes* g_errors = nullptr;

}  // namespace

PyObject* error_type_for(const Error& e) {
  if (g_errors == nullptr) return PyExc_RuntimeError;
  auto pick = [&](const py::object& t) { return t ? t.ptr() : g_errors->base.ptr(); };
  if (dynamic_cast<const ShapeError*>(&e)) return pick(g_errors->shape);
  if (dynamic_cast<const TypeError*>(&e)) return pick(g_errors->type);
  if (dynamic_cast<const ValueError*>(&e)) return pick(g_errors->value);
  if (dynamic_cast<const IndexError*>(&e)) return pick(g_errors->index);
  if (dynamic_cast<const DeviceError*>(&e)) return pick(g_errors->device);
  if (dynamic_cast<const NotImplementedError*>(&e)) return pick(g_errors->not_implemented);
  if (dynamic_cast<const IOError*>(&e)) return pick(g_errors->io);
  if (dynamic_cast<const FormatError*>(&e)) return pick(g_errors->format);
  if (dynamic_cast<const TraceError*>(&e)) return pick(g_errors->trace);
  if (dynamic_cast<const EngineError*>(&e)) return pick(g_errors->engine);
  if (dynamic_cast<const InternalError*>(&e)) return pick(g_errors->internal);
  return g_errors->base.ptr();
}

namespace {

void set_error_types(const py::dict& types) {
  auto get = [&](const char* name) {
    return types.contains(name) ? py::reinterpret_borrow<py::object>(types[name]) : py::object();
  };
  auto* t = new ErrorTypes{get("MXNetError"),          get("ShapeError"),  get("DTypeError"),
                           get("ValueError"),          get("IndexError"),  get("DeviceError"),
                           get("NotImplementedError"), get("IOError"),     get("FormatError"),
                           get("TraceError"),          get("EngineError"), get("InternalError")};
  g_errors = t;  // the previous set, if any, is leaked (set once per process in practice)
}

// The device that creation functions use when given none (MXNet's `with mx.cpu(1):`).
thread_local std::vector<Device> t_device_stack;

Device current_device() { return t_device_stack.empty() ? cpu() : t_device_stack.back(); }

}  // namespace

Device ensure_device(Device d) {
  if (d.is_cpu() && d.id >= num_cpu_devices() && d.id < kMaxDevicesPerType && d.id >= 0) {
    set_num_cpu_devices(d.id + 1);
  }
  check_device(d, "janus");
  return d;
}

Device to_device(py::handle h) {
  if (h.is_none()) return current_device();
  if (py::isinstance<Device>(h)) return ensure_device(h.cast<Device>());
  if (py::isinstance<py::str>(h)) return ensure_device(parse_device(h.cast<std::string>()));
  JANUS_THROW(TypeError, "janus: expected a device (janus.cpu(i)), got {}",
              py::repr(h).cast<std::string>());
}

DType to_dtype(py::handle h, DType fallback) {
  if (h.is_none()) return fallback;
  if (py::isinstance<py::str>(h)) {
    std::string name = h.cast<std::string>();
    if (name == "float") return DType::kFloat32;
    if (name == "int") return DType::kInt64;
    return parse_dtype(name);
  }
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::kFloat32;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::kInt64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::kBool;
  py::object np = py::module_::import("numpy");
  py::object dt = np.attr("dtype")(h);
  std::string name = py::str(dt.attr("name"));
  return parse_dtype(name);
}

py::object to_numpy_dtype(DType dtype) {
  py::object np = py::module_::import("numpy");
  if (dtype == DType::kBFloat16) return np.attr("dtype")("float32");
  return np.attr("dtype")(std::string(dtype_name(dtype)));
}

namespace {

void bind_errors(py::module_& m) {
  m.def("_set_error_types", &set_error_types);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error_type_for(e), e.what());
    }
  });
}

void bind_devices(py::module_& m) {
  py::class_<Device>(m, "Context")
      .def(py::init([](const std::string& type, int id) {
             if (type == "cpu") return ensure_device(cpu(id));
             if (type == "gpu") return ensure_device(gpu(id));
             JANUS_THROW(ValueError,
                         "janus: device type '{}' is not known, expected 'cpu' or 'gpu'", type);
           }),
           py::arg("device_type"), py::arg("device_id") = 0)
      .def_property_readonly("device_type", [](Device d) { return d.is_cpu() ? "cpu" : "gpu"; })
      .def_property_readonly("device_id", [](Device d) { return d.id; })
      .def("__repr__", [](Device d) { return to_string(d); })
      .def("__str__", [](Device d) { return to_string(d); })
      .def(
          "__eq__",
          [](Device a, py::object b) { return py::isinstance<Device>(b) && a == b.cast<Device>(); })
      .def("__hash__", [](Device d) { return static_cast<int>(d.type) * 1024 + d.id; })
      .def("__enter__",
           [](Device d) {
             t_device_stack.push_back(d);
             return d;
           })
      .def("__exit__", [](Device, py::args) { t_device_stack.pop_back(); });
  m.def(
      "cpu", [](int id) { return ensure_device(cpu(id)); }, py::arg("device_id") = 0);
  m.def(
      "gpu", [](int id) { return ensure_device(gpu(id)); }, py::arg("device_id") = 0);
  m.def("current_device", &current_device);
  m.def("num_cpu_devices", &num_cpu_devices);
}

// A `with` scope over a C++ RAII scope (autograd's record and pause).
template <typename Scope>
struct ScopeGuard {
  bool train_mode;
  std::unique_ptr<Scope> scope;
};

template <typename Scope>
void bind_scope(py::module_& m, const char* name) {
  using Guard = ScopeGuard<Scope>;
  py::class_<Guard>(m, name)
      .def(py::init([](bool train_mode) {
             return Guard{train_mode, nullptr};
           }),
           py::arg("train_mode"))
      .def("__enter__",
           [](Guard& g) {
             g.scope = std::make_unique<Scope>(g.train_mode);
             return &g;
           })
      .def("__exit__", [](Guard& g, py::args) { g.scope.reset(); });
}

// Long enough that a wait costs a handful of wake-ups per second, short enough that Ctrl-C
// feels immediate.
constexpr std::chrono::milliseconds kSignalCheckSlice{20};

// Python's main thread (set at import), the only one whose waits poll for signals.
unsigned long g_main_thread = 0;

const WaitPoll& run_signal_handlers() {
  static const WaitPoll poll = [] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
  };
  return poll;
}

template <typename Wait>
void wait_interruptibly(Wait wait) {
  try {
    ReleaseGilInterruptibly release;
    wait();
  } catch (const Interrupted&) {
    throw py::error_already_set();  // the GIL is held again here
  }
}

void bind_engine_and_autograd(py::module_& m) {
  m.def("waitall", &wait_all_interruptibly);
  // The first Janus call of a forked child (the DataLoader's worker processes).
  m.def("_use_naive_engine_after_fork", &use_naive_engine_after_fork);
  m.def("seed", [](uint64_t s) { seed(s); });
  // The engine's counters (tests and benchmarks count the operations a call pushes).
  m.def("_engine_stats", [] {
    const EngineStats s = engine().stats();
    py::dict d;
    d["pushed"] = s.pushed;
    d["in_flight"] = s.in_flight;
    d["max_in_flight"] = s.max_in_flight;
    return d;
  });
  bind_scope<autograd::RecordScope>(m, "_RecordScope");
  bind_scope<autograd::PauseScope>(m, "_PauseScope");
  m.def("is_recording", &autograd::is_recording);
  m.def("is_training", &autograd::is_training);
  m.def(
      "backward",
      [](const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
         bool retain_graph) { autograd::backward(heads, head_grads, retain_graph); },
      py::arg("heads"), py::arg("head_grads") = std::vector<NDArray>{},
      py::arg("retain_graph") = false, ReleaseGil());
}

}  // namespace

ReleaseGilInterruptibly::ReleaseGilInterruptibly() {
  if (PyThread_get_thread_ident() == g_main_thread)
    poll_.emplace(kSignalCheckSlice, run_signal_handlers());
}

void wait_to_read_interruptibly(const NDArray& a, const char* caller) {
  wait_interruptibly([&] {
    // The sliced wait, for its `caller`, with the thread's poll (none off the main thread).
    static const WaitPoll kNoPoll;
    const ScopedWaitPoll* p = ScopedWaitPoll::current();
    wait_to_read(a, p != nullptr ? p->slice() : std::chrono::milliseconds::max(),
                 p != nullptr ? p->poll() : kNoPoll, caller);
  });
}

void wait_all_interruptibly() {
  wait_interruptibly([] { wait_all(); });
}

}  // namespace janus::python

PYBIND11_MODULE(_janus, m) {
  using namespace janus::python;
  m.doc() = "Janus: the C++ core of the janus package (arrays, operators, autograd, blocks)";
  g_main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  // A wait that a signal handler ended (ReleaseGilInterruptibly): the handler's exception
  // (KeyboardInterrupt) is already set.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Interrupted&) {
      if (PyErr_Occurred() == nullptr) PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  bind_errors(m);
  bind_devices(m);
  bind_ndarray(m);
  bind_engine_and_autograd(m);
  bind_gluon(m);
  bind_kvstore(m);
  bind_dlpack(m);
  bind_metrics(m);
  bind_invoke(m);
}
