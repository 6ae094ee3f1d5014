// Shared pieces of the extension module janus._janus: dtype and device conversions between
// Python and C++, and the registration function of each binding file. Layer: python.
#pragma once

#include <optional>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "janus/engine/wait_poll.h"
#include "janus/janus.h"

namespace janus::python {

namespace py = pybind11;

/// Releases the GIL for the duration of a binding that touches no Python object (waits,
/// operator pushes that may block on back-pressure): other Python threads run meanwhile. On
/// Python's main thread it also makes every engine wait inside the call interruptible (the
/// engine's ScopedWaitPoll): such a wait runs Python's signal handlers every slice, taking the
/// GIL for that moment, and one that raises (Ctrl-C: KeyboardInterrupt) ends the wait with
/// Interrupted, which reaches Python as that exception (module.cc translates it). The work
/// already pushed keeps running; the next wait sees its results and errors. Other threads do
/// not poll: Python runs signal handlers on the main thread only.
class ReleaseGilInterruptibly {
 public:
  ReleaseGilInterruptibly();
  ReleaseGilInterruptibly(const ReleaseGilInterruptibly&) = delete;
  ReleaseGilInterruptibly& operator=(const ReleaseGilInterruptibly&) = delete;

 private:
  py::gil_scoped_release release_;
  std::optional<ScopedWaitPoll> poll_;
};

/// A signal handler raised during a wait; the Python error is set (PyErr_CheckSignals).
struct Interrupted {};

/// ReleaseGilInterruptibly around a whole binding.
using ReleaseGil = py::call_guard<ReleaseGilInterruptibly>;

/// A janus DType from a Python dtype spelling: None (-> `fallback`), a name ("float32"), a
/// NumPy dtype or scalar type (numpy.float32), or the Python types float (float32, Janus's and
/// MXNet's default), int (int64) and bool.
DType to_dtype(py::handle h, DType fallback = DType::kFloat32);
/// The NumPy dtype of `dtype` (bfloat16, which NumPy lacks, as float32).
py::object to_numpy_dtype(DType dtype);
/// A Device from a Context, None (cpu(0)) or a text such as "cpu(1)". CPU ids beyond the
/// configured count add logical CPU devices on first use (MXNet's cpu(i) needs no set-up).
Device to_device(py::handle h);
/// The Python class of a Janus error (set by janus/base.py), for raising it by hand.
PyObject* error_type_for(const Error& e);
/// Makes cpu(id) exist (see to_device); throws DeviceError for GPUs (no CUDA backend).
Device ensure_device(Device d);

/// The optimizer `name` ("sgd", "adam") with Gluon's optimizer_params dict (learning_rate,
/// momentum, wd, ...; None for the defaults); ValueError naming an unknown parameter.
optim::OptimizerPtr to_optimizer(const std::string& name, const py::object& options);

/// wait_to_read and wait_all for Python, called with the GIL held: they wait in a
/// ReleaseGilInterruptibly scope, so Ctrl-C raises KeyboardInterrupt (py::error_already_set,
/// for callers outside a binding's dispatch) during the wait. `caller` names the public call in
/// errors.
void wait_to_read_interruptibly(const NDArray& a, const char* caller = "wait_to_read");
void wait_all_interruptibly();

void bind_ndarray(py::module_& m);
void bind_kvstore(py::module_& m);
void bind_metrics(py::module_& m);
void bind_gluon(py::module_& m);
void bind_dlpack(py::module_& m);
void bind_invoke(py::module_& m);

}  // namespace janus::python
