// `_janus.invoke(name, inputs, attrs)`: any registered operator by its name, with its
// attributes by name, for the Python namespaces that map another framework's operators onto
// Janus's (janus/ndarray.py, MXNet 1.x's legacy operators). The call goes through ops::invoke,
// so autograd records it and hybridize traces it like every other operator. Layer: python.
#include <string>
#include <utility>
#include <vector>

#include "janus/graph/symbol.h"

#include "bindings.h"

namespace janus::python {
namespace {

// A Python attribute value as the registry's AttrValue: bool, int, float, str or a sequence of
// ints (widened to a Shape where the operator takes one, by complete_attrs). Dtype attributes
// are read by to_dtype instead.
ops::AttrValue to_attr(const std::string& op, const std::string& key, py::handle v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<int64_t>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    std::vector<int64_t> ints;
    for (py::handle e : v) {
      if (!py::isinstance<py::int_>(e) || py::isinstance<py::bool_>(e)) {
        JANUS_THROW(ValueError, "{}: attribute '{}' must be a sequence of integers, got {}", op,
                    key, py::repr(v).cast<std::string>());
      }
      ints.push_back(e.cast<int64_t>());
    }
    return ints;
  }
  JANUS_THROW(ValueError, "{}: attribute '{}' has an unsupported value {}", op, key,
              py::repr(v).cast<std::string>());
}

}  // namespace

void bind_invoke(py::module_& m) {
  m.def(
      "invoke",
      [](const std::string& name, const std::vector<NDArray>& inputs, const py::dict& attrs) {
        const ops::OpDef& op = ops::get_op(name);
        graph::NamedAttrs named;
        for (const auto& [k, v] : attrs) {
          const std::string key = k.cast<std::string>();
          // A dtype attribute takes any spelling that to_dtype reads (a name, a numpy dtype).
          const int index = op.attr_index(key);
          if (index >= 0 && op.attrs[static_cast<size_t>(index)].type == ops::AttrType::kDType) {
            named.emplace_back(key, to_dtype(v));
          } else {
            named.emplace_back(key, to_attr(name, key, v));
          }
        }
        ops::Attrs bound = graph::attrs_from_named(op, named);
        ReleaseGilInterruptibly release;
        return ops::invoke(op, inputs, std::move(bound));
      },
      py::arg("name"), py::arg("inputs"), py::arg("attrs") = py::dict(),
      "Runs the registered operator `name` on `inputs` with `attrs` (by name); its outputs.");
}

}  // namespace janus::python
