// janus._janus's metrics: the C++ running accuracy and mean loss (updates stay on the engine;
// get() waits, with the GIL released). janus.gluon.metric gives them MXNet's interface.
// Layer: python.
#include "bindings.h"

namespace janus::python {

void bind_metrics(py::module_& m) {
  py::class_<nn::Accuracy>(m, "_Accuracy")
      .def(py::init<>())
      .def("update", &nn::Accuracy::update, py::arg("label"), py::arg("pred"), ReleaseGil())
      .def("get", &nn::Accuracy::get, ReleaseGil())
      .def_property_readonly("count", &nn::Accuracy::count)
      .def("reset", &nn::Accuracy::reset);
  py::class_<nn::MeanLoss>(m, "_MeanLoss")
      .def(py::init<>())
      .def("update", &nn::MeanLoss::update, py::arg("loss"), ReleaseGil())
      .def("get", &nn::MeanLoss::get, ReleaseGil())
      .def_property_readonly("count", &nn::MeanLoss::count)
      .def("reset", &nn::MeanLoss::reset);
}

}  // namespace janus::python
