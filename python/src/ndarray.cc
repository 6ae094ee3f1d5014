// janus._janus.ndarray: the array class and the operator functions the numpy-style frontend
// (python/janus/numpy) calls. Every operator binding releases the GIL: a push may block on the
// engine's back-pressure, and waits block until the work is done. Layer: python.
#include <cstring>
#include <string>
#include <vector>

#include <pybind11/numpy.h>

#include "janus/ops/transfer.h"

#include "bindings.h"

namespace janus::python {
namespace {

// NumPy's promotion, reduced to Janus's dtypes: bool < uint8 < int32 < int64 < float16 <
// bfloat16 < float32 < float64.
int dtype_rank(DType d) {
  switch (d) {
    case DType::kBool:
      return 0;
    case DType::kUInt8:
      return 1;
    case DType::kInt32:
      return 2;
    case DType::kInt64:
      return 3;
    case DType::kFloat16:
      return 4;
    case DType::kBFloat16:
      return 5;
    case DType::kFloat32:
      return 6;
    case DType::kFloat64:
      return 7;
  }
  return 6;
}

// Operands of one dtype (the C++ operators require it), the lower one cast up.
std::pair<NDArray, NDArray> promote(const NDArray& a, const NDArray& b) {
  if (a.dtype() == b.dtype()) return {a, b};
  if (dtype_rank(a.dtype()) < dtype_rank(b.dtype())) return {cast(a, b.dtype()), b};
  return {a, cast(b, a.dtype())};
}

// True division and powers are floating (NumPy's true_divide of integers gives floats; MXNet's
// default float is float32).
NDArray as_floating(const NDArray& a) {
  return is_floating(a.dtype()) ? a : cast(a, DType::kFloat32);
}

// A 0-d array holding `value` in `like`'s dtype, on its device (comparisons with scalars).
NDArray scalar_like(const NDArray& like, double value) {
  return full(Shape{}, value, like.dtype(), like.device());
}

std::vector<int64_t> to_axes(const py::object& axis) {
  if (axis.is_none()) return {};
  if (py::isinstance<py::int_>(axis)) return {axis.cast<int64_t>()};
  return axis.cast<std::vector<int64_t>>();
}

// A shape from the arguments of reshape(2, 3), reshape((2, 3)), zeros(5) or zeros((2, 3)).
Shape to_shape(const py::object& obj) {
  if (py::isinstance<py::int_>(obj)) return Shape{obj.cast<int64_t>()};
  return Shape(obj.cast<std::vector<int64_t>>());
}

Shape shape_from_args(const py::args& args) {
  if (args.size() == 1) return to_shape(args[0]);
  return Shape(args.cast<std::vector<int64_t>>());
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.ndim());
  for (int i = 0; i < s.ndim(); ++i) t[i] = s[i];
  return t;
}

// x (broadcast and cast to dst's shape and dtype) written into dst, in place: the in-place
// operators and slice assignment. One engine operation on dst's var orders it with every
// earlier and later use of dst.
void assign(const NDArray& dst, NDArray value) {
  if (value.dtype() != dst.dtype()) value = cast(value, dst.dtype());
  if (value.device() != dst.device()) value = copyto(value, dst.device());
  if (!(value.shape() == dst.shape())) value = broadcast_to(value, dst.shape());
  copy_into(dst, value);
}

py::array to_numpy(const NDArray& a) {
  const DType out_dtype = a.dtype() == DType::kBFloat16 ? DType::kFloat32 : a.dtype();
  py::array out(to_numpy_dtype(out_dtype), a.shape().dims());
  void* ptr = out.mutable_data();
  wait_to_read_interruptibly(a, "asnumpy");  // then the copy finds the array ready
  {
    ReleaseGilInterruptibly release;
    copy_to_host(a, ptr, out_dtype, "asnumpy");
  }
  return out;
}

py::object to_item(const NDArray& a) {
  if (a.defined() && a.size() == 1)
    wait_to_read_interruptibly(a, "item");  // then item finds it ready
  switch (a.dtype()) {
    case DType::kBool: {
      bool v;
      {
        ReleaseGilInterruptibly release;
        v = item<bool>(a);
      }
      return py::bool_(v);
    }
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8: {
      int64_t v;
      {
        ReleaseGilInterruptibly release;
        v = item<int64_t>(a);
      }
      return py::int_(v);
    }
    default: {
      double v;
      {
        ReleaseGilInterruptibly release;
        v = item<double>(a);
      }
      return py::float_(v);
    }
  }
}

// The buffer protocol (memoryview(a), numpy.asarray(a), DLPack through NumPy): the array's own
// memory, no copy. Every operation pushed on the array so far has finished when the buffer is
// handed out (a no-op write is pushed and waited for: a write runs after every earlier read and
// write); operations pushed later are not ordered with what Python does through the buffer.
py::buffer_info to_buffer(const NDArray& a) {
  JANUS_CHECK(!a.is_placeholder(), TraceError,
              "buffer: a symbolic array (shape {}, {}) has no memory while a hybridized block is "
              "traced",
              a.shape(), dtype_name(a.dtype()));
  JANUS_CHECK(a.device().is_cpu(), DeviceError, "buffer: the array is on {}, expected a CPU",
              a.device());
  std::string format;
  switch (a.dtype()) {
    case DType::kFloat32:
      format = py::format_descriptor<float>::format();
      break;
    case DType::kFloat64:
      format = py::format_descriptor<double>::format();
      break;
    case DType::kInt32:
      format = py::format_descriptor<int32_t>::format();
      break;
    case DType::kInt64:
      format = py::format_descriptor<int64_t>::format();
      break;
    case DType::kUInt8:
      format = py::format_descriptor<uint8_t>::format();
      break;
    case DType::kBool:
      format = py::format_descriptor<bool>::format();
      break;
    default:
      JANUS_THROW(TypeError,
                  "buffer: {} has no buffer format (NumPy has no such type); "
                  "astype('float32') first",
                  dtype_name(a.dtype()));
  }
  {
    ReleaseGilInterruptibly release;
    engine().push([](const RunContext&) {}, {}, {a.var()}, a.device(), Lane::kCopy, 0,
                  "buffer_export");
  }
  wait_to_read_interruptibly(a, "buffer");
  const auto item = static_cast<py::ssize_t>(dtype_size(a.dtype()));
  std::vector<py::ssize_t> shape(a.shape().dims().begin(), a.shape().dims().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = item;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return py::buffer_info(a.raw_data(), item, format, static_cast<py::ssize_t>(shape.size()), shape,
                         strides);
}

extern "C" int ndarray_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  if (view == nullptr) {
    PyErr_SetString(PyExc_BufferError, "ndarray: getbuffer without a view");
    return -1;
  }
  std::memset(view, 0, sizeof(Py_buffer));
  try {
    const NDArray& a = py::handle(obj).cast<const NDArray&>();
    auto* info = new py::buffer_info(to_buffer(a));
    view->obj = obj;
    view->internal = info;
    view->buf = info->ptr;
    view->itemsize = info->itemsize;
    view->len = info->itemsize * a.size();
    view->readonly = 0;
    view->ndim = 1;
    if ((flags & PyBUF_FORMAT) == PyBUF_FORMAT)
      view->format = const_cast<char*>(info->format.c_str());
    if ((flags & PyBUF_STRIDES) == PyBUF_STRIDES) {
      view->ndim = static_cast<int>(info->ndim);
      view->strides = info->strides.data();
      view->shape = info->shape.data();
    }
    Py_INCREF(obj);
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const Interrupted&) {  // a signal handler's exception is set
  } catch (const Error& e) {
    PyErr_SetString(error_type_for(e), e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  view->obj = nullptr;
  return -1;
}

// np.array(numpy_array, dtype, ctx): one copy from the (C-contiguous) NumPy buffer.
NDArray from_numpy(const py::array& src, py::object dtype, py::object ctx) {
  py::array arr = py::array::ensure(src, py::array::c_style);
  std::string name = py::str(arr.dtype().attr("name"));
  const DType src_dtype = parse_dtype(name);
  const DType dst_dtype = to_dtype(dtype, src_dtype);
  const Device device = to_device(ctx);
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  const void* ptr = arr.data();
  const int64_t count = arr.size();
  ReleaseGilInterruptibly release;
  return from_host(ptr, src_dtype, count, Shape(std::move(dims)), dst_dtype, device);
}

// The binary operators of the class: array with array (dtypes promoted) or with a Python
// scalar; `r` versions have the scalar on the left.
template <typename ArrayFn, typename ScalarFn>
void def_binary(py::class_<NDArray>& c, const char* name, ArrayFn array_fn, ScalarFn scalar_fn) {
  c.def(
      name,
      [array_fn](const NDArray& a, const NDArray& b) {
        auto [x, y] = promote(a, b);
        return array_fn(x, y);
      },
      py::is_operator(), ReleaseGil());
  c.def(name, scalar_fn, py::is_operator(), ReleaseGil());
}

// In-place operators return the same Python object (x += 1 keeps `x is y`); the result is
// written into the array's storage by one engine operation.
template <typename ArrayFn, typename ScalarFn>
void def_inplace(py::class_<NDArray>& c, const char* name, ArrayFn array_fn, ScalarFn scalar_fn) {
  c.def(
      name,
      [array_fn](py::object self, const NDArray& b) {
        const NDArray a = self.cast<NDArray>();
        {
          ReleaseGilInterruptibly release;
          auto [x, y] = promote(a, b);
          assign(a, array_fn(x, y));
        }
        return self;
      },
      py::is_operator());
  c.def(
      name,
      [scalar_fn](py::object self, double s) {
        const NDArray a = self.cast<NDArray>();
        {
          ReleaseGilInterruptibly release;
          assign(a, scalar_fn(a, s));
        }
        return self;
      },
      py::is_operator());
}

void bind_class(py::module_& m) {
  py::class_<NDArray> c(m, "ndarray", py::buffer_protocol());
  // pybind11's own getbuffer lets a C++ exception cross CPython's C frames (undefined
  // behaviour): the array's getbuffer is ours, raising the error as a Python exception.
  // pybind11's releasebuffer (delete the buffer_info in view->internal) stays.
  reinterpret_cast<PyHeapTypeObject*>(c.ptr())->as_buffer.bf_getbuffer = &ndarray_getbuffer;
  c.def_property_readonly("shape", [](const NDArray& a) { return shape_tuple(a.shape()); })
      .def_property_readonly("dtype", [](const NDArray& a) { return to_numpy_dtype(a.dtype()); })
      .def_property_readonly("_dtype_name",
                             [](const NDArray& a) { return std::string(dtype_name(a.dtype())); })
      .def_property_readonly("ndim", &NDArray::ndim)
      .def_property_readonly("size", &NDArray::size)
      .def_property_readonly("ctx", &NDArray::device)
      .def_property_readonly("context", &NDArray::device)
      .def_property_readonly("device", &NDArray::device)
      // A placeholder of a hybridized block's trace: shape, dtype and device, no values.
      .def_property_readonly("_is_symbol", &NDArray::is_placeholder)
      .def("__len__",
           [](const NDArray& a) {
             JANUS_CHECK(a.ndim() > 0, TypeError, "len() of a 0-d array");
             return a.shape()[0];
           })
      .def("asnumpy", &to_numpy)
      .def("item", &to_item)
      .def("wait_to_read", [](const NDArray& a) { wait_to_read_interruptibly(a); })
      .def("copyto",
           [](const NDArray& a, py::object target) -> NDArray {
             if (py::isinstance<NDArray>(target)) {
               NDArray dst = target.cast<NDArray>();
               ReleaseGilInterruptibly release;
               assign(dst, a);
               return dst;
             }
             Device d = to_device(target);
             ReleaseGilInterruptibly release;
             return copyto(a, d);
           })
      .def("as_in_ctx",
           [](const NDArray& a, py::object ctx) {
             Device d = to_device(ctx);
             if (d == a.device()) return a;
             ReleaseGilInterruptibly release;  // a push may wait on back-pressure
             return copyto(a, d);
           })
      .def(
          "astype",
          [](const NDArray& a, py::object dtype, bool copy) {
            DType d = to_dtype(dtype);
            if (d == a.dtype() && !copy) return a;
            ReleaseGilInterruptibly release;
            return cast(a, d);
          },
          py::arg("dtype"), py::arg("copy") = true)
      .def("reshape",
           [](const NDArray& a, py::args args) {
             Shape s = shape_from_args(args);
             ReleaseGilInterruptibly release;
             return reshape(a, s);
           })
      .def("transpose",
           [](const NDArray& a, py::args args) {
             std::vector<int64_t> axes;
             if (args.size() == 1 && !args[0].is_none()) axes = to_axes(args[0]);
             if (args.size() > 1) axes = args.cast<std::vector<int64_t>>();
             ReleaseGilInterruptibly release;
             return transpose(a, axes);
           })
      .def_property_readonly("T",
                             [](const NDArray& a) {
                               ReleaseGilInterruptibly release;
                               return transpose(a);
                             })
      .def(
          "copy", [](const NDArray& a) { return a + 0.0; }, ReleaseGil())
      .def("detach", &autograd::detach)
      .def(
          "attach_grad",
          [](const NDArray& a, const std::string& req) {
            autograd::GradReq r = req == "null"  ? autograd::GradReq::kNull
                                  : req == "add" ? autograd::GradReq::kAdd
                                                 : autograd::GradReq::kWrite;
            JANUS_CHECK(req == "null" || req == "add" || req == "write", ValueError,
                        "attach_grad: grad_req '{}' is not known, expected 'write', 'add' or "
                        "'null'",
                        req);
            autograd::attach_grad(a, r);
          },
          py::arg("grad_req") = "write")
      .def_property_readonly("grad",
                             [](const NDArray& a) -> py::object {
                               if (!autograd::requires_grad(a)) return py::none();
                               return py::cast(autograd::grad(a));
                             })
      .def(
          "backward",
          [](const NDArray& a, std::optional<NDArray> out_grad, bool retain_graph) {
            std::vector<NDArray> heads{a};
            std::vector<NDArray> grads;
            if (out_grad) grads.push_back(*out_grad);
            autograd::backward(heads, grads, retain_graph);
          },
          py::arg("out_grad") = std::nullopt, py::arg("retain_graph") = false, ReleaseGil())
      .def(
          "__neg__", [](const NDArray& a) { return negative(a); }, ReleaseGil())
      .def("__pos__", [](const NDArray& a) { return a; })
      .def(
          "__abs__", [](const NDArray& a) { return janus::abs(a); }, ReleaseGil())
      .def(
          "__matmul__", [](const NDArray& a, const NDArray& b) { return matmul(a, b); },
          ReleaseGil())
      .def("_same", [](const NDArray& a, const NDArray& b) { return a.is_same(b); });

  using A = const NDArray&;
  def_binary(
      c, "__add__", [](A a, A b) { return add(a, b); }, [](A a, double s) { return add(a, s); });
  def_binary(
      c, "__radd__", [](A a, A b) { return add(b, a); }, [](A a, double s) { return add(a, s); });
  def_binary(
      c, "__sub__", [](A a, A b) { return subtract(a, b); },
      [](A a, double s) { return subtract(a, s); });
  def_binary(
      c, "__rsub__", [](A a, A b) { return subtract(b, a); },
      [](A a, double s) { return subtract(s, a); });
  def_binary(
      c, "__mul__", [](A a, A b) { return mul(a, b); }, [](A a, double s) { return mul(a, s); });
  def_binary(
      c, "__rmul__", [](A a, A b) { return mul(b, a); }, [](A a, double s) { return mul(a, s); });
  def_binary(
      c, "__truediv__", [](A a, A b) { return divide(as_floating(a), as_floating(b)); },
      [](A a, double s) { return divide(as_floating(a), s); });
  def_binary(
      c, "__rtruediv__", [](A a, A b) { return divide(as_floating(b), as_floating(a)); },
      [](A a, double s) { return divide(s, as_floating(a)); });
  def_binary(
      c, "__pow__", [](A a, A b) { return power(as_floating(a), as_floating(b)); },
      [](A a, double s) { return power(as_floating(a), s); });
  def_binary(
      c, "__rpow__", [](A a, A b) { return power(as_floating(b), as_floating(a)); },
      [](A a, double s) { return power(s, as_floating(a)); });
  def_binary(
      c, "__eq__", [](A a, A b) { return equal(a, b); },
      [](A a, double s) { return equal(a, scalar_like(a, s)); });
  def_binary(
      c, "__ne__", [](A a, A b) { return not_equal(a, b); },
      [](A a, double s) { return not_equal(a, scalar_like(a, s)); });
  def_binary(
      c, "__lt__", [](A a, A b) { return less(a, b); },
      [](A a, double s) { return less(a, scalar_like(a, s)); });
  def_binary(
      c, "__le__", [](A a, A b) { return less_equal(a, b); },
      [](A a, double s) { return less_equal(a, scalar_like(a, s)); });
  def_binary(
      c, "__gt__", [](A a, A b) { return greater(a, b); },
      [](A a, double s) { return greater(a, scalar_like(a, s)); });
  def_binary(
      c, "__ge__", [](A a, A b) { return greater_equal(a, b); },
      [](A a, double s) { return greater_equal(a, scalar_like(a, s)); });
  def_inplace(
      c, "__iadd__", [](A a, A b) { return add(a, b); }, [](A a, double s) { return add(a, s); });
  def_inplace(
      c, "__isub__", [](A a, A b) { return subtract(a, b); },
      [](A a, double s) { return subtract(a, s); });
  def_inplace(
      c, "__imul__", [](A a, A b) { return mul(a, b); }, [](A a, double s) { return mul(a, s); });
  def_inplace(
      c, "__itruediv__", [](A a, A b) { return divide(as_floating(a), as_floating(b)); },
      [](A a, double s) { return divide(as_floating(a), s); });
  // An unhashable value type, as NumPy's ndarray.
  c.attr("__hash__") = py::none();

  // Reductions as methods and functions (axis: None, an int or a tuple).
  auto def_reduce = [&](const char* name, auto fn) {
    auto f = [fn](const NDArray& a, py::object axis, bool keepdims) {
      std::vector<int64_t> axes = to_axes(axis);
      ReleaseGilInterruptibly release;
      return fn(a, axes, keepdims);
    };
    c.def(name, f, py::arg("axis") = py::none(), py::arg("keepdims") = false);
    m.def(name, f, py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  };
  def_reduce("sum", [](A a, std::vector<int64_t> ax, bool k) {
    // NumPy sums booleans as integers.
    return sum(a.dtype() == DType::kBool ? cast(a, DType::kInt64) : a, ax, k);
  });
  def_reduce("mean",
             [](A a, std::vector<int64_t> ax, bool k) { return mean(as_floating(a), ax, k); });
  def_reduce("max", [](A a, std::vector<int64_t> ax, bool k) { return janus::max(a, ax, k); });
  def_reduce("min", [](A a, std::vector<int64_t> ax, bool k) { return janus::min(a, ax, k); });
  def_reduce("prod", [](A a, std::vector<int64_t> ax, bool k) { return prod(a, ax, k); });
  def_reduce("norm", [](A a, std::vector<int64_t> ax, bool k) { return norm(a, ax, k); });
  def_reduce("logsumexp", [](A a, std::vector<int64_t> ax, bool k) { return logsumexp(a, ax, k); });
  auto def_arg = [&](const char* name, auto fn) {
    auto f = [fn](const NDArray& a, py::object axis, bool keepdims) {
      NDArray x = a;
      int64_t ax = 0;
      if (axis.is_none()) {
        x = reshape(a, Shape{-1});
      } else {
        ax = axis.cast<int64_t>();
      }
      ReleaseGilInterruptibly release;
      return fn(x, ax, keepdims);
    };
    c.def(name, f, py::arg("axis") = py::none(), py::arg("keepdims") = false);
    m.def(name, f, py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  };
  def_arg("argmax", [](A a, int64_t ax, bool k) { return argmax(a, ax, k); });
  def_arg("argmin", [](A a, int64_t ax, bool k) { return argmin(a, ax, k); });
}

void bind_functions(py::module_& m) {
  m.def("from_numpy", &from_numpy, py::arg("array"), py::arg("dtype") = py::none(),
        py::arg("ctx") = py::none());
  auto def_creation = [&](const char* name, auto fn) {
    m.def(
        name,
        [fn](py::object shape, py::object dtype, py::object ctx) {
          Shape s = to_shape(shape);
          DType d = to_dtype(dtype);
          Device dev = to_device(ctx);
          ReleaseGilInterruptibly release;
          return fn(s, d, dev);
        },
        py::arg("shape"), py::arg("dtype") = py::none(), py::arg("ctx") = py::none());
  };
  def_creation("zeros", [](const Shape& s, DType d, Device dev) { return zeros(s, d, dev); });
  def_creation("ones", [](const Shape& s, DType d, Device dev) { return ones(s, d, dev); });
  def_creation("empty", [](const Shape& s, DType d, Device dev) { return zeros(s, d, dev); });
  m.def(
      "full",
      [](py::object shape, double value, py::object dtype, py::object ctx) {
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        Device dev = to_device(ctx);
        ReleaseGilInterruptibly release;
        return full(s, value, d, dev);
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());
  m.def(
      "arange",
      [](double start, double stop, double step, py::object dtype, py::object ctx) {
        DType d = to_dtype(dtype);
        Device dev = to_device(ctx);
        ReleaseGilInterruptibly release;
        return arange(start, stop, step, d, dev);
      },
      py::arg("start"), py::arg("stop"), py::arg("step") = 1.0, py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());
  m.def(
      "linspace",
      [](double start, double stop, int64_t num, bool endpoint, py::object dtype, py::object ctx) {
        return linspace(start, stop, num, endpoint, to_dtype(dtype), to_device(ctx));
      },
      py::arg("start"), py::arg("stop"), py::arg("num") = 50, py::arg("endpoint") = true,
      py::arg("dtype") = py::none(), py::arg("ctx") = py::none());
  m.def(
      "eye",
      [](int64_t n, int64_t mm, int64_t k, py::object dtype, py::object ctx) {
        return eye(n, mm, k, to_dtype(dtype), to_device(ctx));
      },
      py::arg("N"), py::arg("M") = -1, py::arg("k") = 0, py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());
  m.def(
      "random_normal",
      [](double loc, double scale, py::object shape, py::object dtype, py::object ctx) {
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        Device dev = to_device(ctx);
        ReleaseGilInterruptibly release;
        return random_normal(loc, scale, s, d, dev);
      },
      py::arg("loc"), py::arg("scale"), py::arg("shape"), py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());
  m.def(
      "random_uniform",
      [](double low, double high, py::object shape, py::object dtype, py::object ctx) {
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        Device dev = to_device(ctx);
        ReleaseGilInterruptibly release;
        return random_uniform(low, high, s, d, dev);
      },
      py::arg("low"), py::arg("high"), py::arg("shape"), py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());
  m.def(
      "randint",
      [](int64_t low, int64_t high, py::object shape, py::object dtype, py::object ctx) {
        return randint(low, high, to_shape(shape), to_dtype(dtype, DType::kInt64), to_device(ctx));
      },
      py::arg("low"), py::arg("high"), py::arg("shape"), py::arg("dtype") = py::none(),
      py::arg("ctx") = py::none());

  using A = const NDArray&;
  // Unary functions of janus::ops, one line each.
#define JANUS_PY_UNARY(name, expr) \
  m.def(                           \
      #name, [](A x) { return expr; }, py::arg("x"), ReleaseGil())
  JANUS_PY_UNARY(negative, negative(x));
  JANUS_PY_UNARY(abs, janus::abs(x));
  JANUS_PY_UNARY(square, square(x));
  JANUS_PY_UNARY(sign, sign(x));
  JANUS_PY_UNARY(relu, relu(x));
  JANUS_PY_UNARY(exp, janus::exp(as_floating(x)));
  JANUS_PY_UNARY(log, janus::log(as_floating(x)));
  JANUS_PY_UNARY(log1p, janus::log1p(as_floating(x)));
  JANUS_PY_UNARY(sqrt, janus::sqrt(as_floating(x)));
  JANUS_PY_UNARY(rsqrt, rsqrt(as_floating(x)));
  JANUS_PY_UNARY(sin, janus::sin(as_floating(x)));
  JANUS_PY_UNARY(cos, janus::cos(as_floating(x)));
  JANUS_PY_UNARY(tanh, janus::tanh(as_floating(x)));
  JANUS_PY_UNARY(erf, janus::erf(as_floating(x)));
  JANUS_PY_UNARY(sigmoid, sigmoid(as_floating(x)));
  JANUS_PY_UNARY(gelu, gelu(as_floating(x)));
  JANUS_PY_UNARY(softplus, softplus(as_floating(x)));
  JANUS_PY_UNARY(flatten, flatten(x));
#undef JANUS_PY_UNARY
  m.def(
      "leaky_relu", [](A x, double alpha) { return leaky_relu(x, alpha); }, py::arg("x"),
      py::arg("alpha") = 0.01, ReleaseGil());
  m.def(
      "clip", [](A x, double lo, double hi) { return clip(x, lo, hi); }, ReleaseGil());
  m.def("cast", [](A x, py::object dtype) { return cast(x, to_dtype(dtype)); });
  m.def(
      "softmax", [](A x, int64_t axis) { return softmax(as_floating(x), axis); }, py::arg("x"),
      py::arg("axis") = -1, ReleaseGil());
  m.def(
      "log_softmax", [](A x, int64_t axis) { return log_softmax(as_floating(x), axis); },
      py::arg("x"), py::arg("axis") = -1, ReleaseGil());
  m.def("softmax_cross_entropy", &softmax_cross_entropy, ReleaseGil());
  m.def(
      "one_hot",
      [](A x, int64_t depth, py::object dtype) { return one_hot(x, depth, to_dtype(dtype)); },
      py::arg("indices"), py::arg("depth"), py::arg("dtype") = py::none());
  m.def(
      "dropout", [](A x, double p, bool training) { return dropout(x, p, training); },
      ReleaseGil());

  auto def_binary_fn = [&](const char* name, auto fn) {
    m.def(
        name,
        [fn](A a, A b) {
          auto [x, y] = promote(a, b);
          return fn(x, y);
        },
        ReleaseGil());
    m.def(
        name, [fn](A a, double s) { return fn(a, scalar_like(a, s)); }, ReleaseGil());
    m.def(
        name, [fn](double s, A b) { return fn(scalar_like(b, s), b); }, ReleaseGil());
  };
  def_binary_fn("add", [](A a, A b) { return add(a, b); });
  def_binary_fn("subtract", [](A a, A b) { return subtract(a, b); });
  def_binary_fn("multiply", [](A a, A b) { return mul(a, b); });
  def_binary_fn("divide", [](A a, A b) { return divide(as_floating(a), as_floating(b)); });
  def_binary_fn("power", [](A a, A b) { return power(as_floating(a), as_floating(b)); });
  def_binary_fn("maximum", [](A a, A b) { return maximum(a, b); });
  def_binary_fn("minimum", [](A a, A b) { return minimum(a, b); });
  def_binary_fn("equal", [](A a, A b) { return equal(a, b); });
  def_binary_fn("not_equal", [](A a, A b) { return not_equal(a, b); });
  def_binary_fn("less", [](A a, A b) { return less(a, b); });
  def_binary_fn("less_equal", [](A a, A b) { return less_equal(a, b); });
  def_binary_fn("greater", [](A a, A b) { return greater(a, b); });
  def_binary_fn("greater_equal", [](A a, A b) { return greater_equal(a, b); });
  m.def(
      "where",
      [](A c, A a, A b) {
        auto [x, y] = promote(a, b);
        return where(c, x, y);
      },
      ReleaseGil());
  m.def(
      "dot",
      [](A a, A b) {
        auto [x, y] = promote(a, b);
        if (x.ndim() == 0 || y.ndim() == 0) return mul(x, y);
        return matmul(x, y);
      },
      ReleaseGil());
  m.def(
      "matmul",
      [](A a, A b) {
        auto [x, y] = promote(a, b);
        return matmul(x, y);
      },
      ReleaseGil());

  // Shape functions.
  m.def("reshape", [](A x, py::object shape) { return reshape(x, to_shape(shape)); });
  m.def(
      "transpose", [](A x, py::object axes) { return transpose(x, to_axes(axes)); }, py::arg("a"),
      py::arg("axes") = py::none());
  m.def(
      "expand_dims", [](A x, int64_t axis) { return expand_dims(x, axis); }, ReleaseGil());
  m.def(
      "squeeze", [](A x, py::object axis) { return squeeze(x, to_axes(axis)); }, py::arg("a"),
      py::arg("axis") = py::none());
  m.def("broadcast_to", [](A x, py::object shape) { return broadcast_to(x, to_shape(shape)); });
  m.def(
      "concat2", [](A a, A b, int64_t axis) { return concat(a, b, axis); }, ReleaseGil());
  m.def(
      "stack2", [](A a, A b, int64_t axis) { return stack(a, b, axis); }, ReleaseGil());
  m.def(
      "slice_axis",
      [](A x, int64_t axis, int64_t begin, int64_t end) { return slice_axis(x, axis, begin, end); },
      ReleaseGil());
  m.def(
      "strided_slice",
      [](A x, std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> step) {
        return slice(x, std::move(begin), std::move(end), std::move(step));
      },
      ReleaseGil());
  m.def(
      "take", [](A x, A indices, int64_t axis) { return take(x, indices, axis); }, py::arg("a"),
      py::arg("indices"), py::arg("axis") = 0, ReleaseGil());
  m.def(
      "pad", [](A x, std::vector<int64_t> widths, double value) { return pad(x, widths, value); },
      ReleaseGil());
  m.def("copyto_device", [](A x, py::object ctx) {
    Device d = to_device(ctx);
    ReleaseGilInterruptibly release;
    return copyto(x, d);
  });

  // Views and in-place writes (slice assignment).
  m.def("view_rows", [](A x, int64_t begin, int64_t end) { return x.slice(begin, end); });
  m.def("view_at", [](A x, int64_t index) { return x.at(index); });
  m.def("assign", &assign, ReleaseGil());
  m.def(
      "assign_scalar", [](A dst, double v) { assign(dst, scalar_like(dst, v)); }, ReleaseGil());
}

}  // namespace

void bind_ndarray(py::module_& m) {
  bind_class(m);
  bind_functions(m);
}

}  // namespace janus::python
