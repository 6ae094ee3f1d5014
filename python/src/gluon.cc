// janus._janus's Gluon half: blocks (with a trampoline so that Python subclasses' `forward` is
// what C++ calls, and what hybridize traces), the built-in layers, parameters, initializers,
// losses, the Trainer and the data loaders. Layer: python.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "janus/ops/ctc_loss.h"

#include "bindings.h"

namespace janus::python {
namespace {

using nn::Block;
using nn::BlockPtr;
using nn::Parameter;
using nn::ParameterPtr;

// The Python object of a C++ Initializer (pybind11 cannot hold a shared_ptr<const T>).
struct PyInitializer {
  nn::InitializerPtr ptr;
};

// Every new replica a copy of one array (MXNet's Constant parameters: params.get_constant).
class ArrayInit : public nn::Initializer {
 public:
  explicit ArrayInit(NDArray value) : value_(std::move(value)) {}
  NDArray make(const Shape& shape, DType dtype, Device device) const override {
    JANUS_CHECK(shape == value_.shape(), ShapeError,
                "constant initializer: the parameter has shape {}, but the value has shape {}",
                shape, value_.shape());
    return copyto(dtype == value_.dtype() ? value_ : cast(value_, dtype), device);
  }
  std::string describe() const override { return fmt::format("Constant({})", value_.shape()); }

 private:
  NDArray value_;
};

nn::InitializerPtr to_init(py::handle h) {
  if (h.is_none()) return nullptr;
  if (py::isinstance<PyInitializer>(h)) return h.cast<PyInitializer&>().ptr;
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    if (name == "zeros" || name == "zero") return nn::Zero();
    if (name == "ones" || name == "one") return nn::One();
    if (name == "xavier") return nn::Xavier();
    if (name == "uniform") return nn::Uniform();
    if (name == "normal") return nn::Normal();
    JANUS_THROW(ValueError,
                "initializer: '{}' is not known, expected 'zeros', 'ones', 'xavier', 'uniform' or "
                "'normal' (or an init.* object)",
                name);
  }
  JANUS_THROW(TypeError, "initializer: expected an init.* object or a name, got {}",
              py::repr(h).cast<std::string>());
}

std::string activation_or_empty(const py::object& a) {
  return a.is_none() ? std::string() : a.cast<std::string>();
}

// (3, 3), [3, 3] or 3 -> {3, 3}; `n` copies of a single int.
std::vector<int64_t> to_pair(const py::object& v, size_t n = 2) {
  if (py::isinstance<py::int_>(v)) return std::vector<int64_t>(n, v.cast<int64_t>());
  return v.cast<std::vector<int64_t>>();
}

std::vector<Device> to_devices(const py::object& ctx) {
  if (py::isinstance<py::list>(ctx) || py::isinstance<py::tuple>(ctx)) {
    std::vector<Device> out;
    for (py::handle h : ctx) out.push_back(to_device(h));
    return out;
  }
  return {to_device(ctx)};
}

autograd::GradReq to_grad_req(const std::string& req) {
  if (req == "write") return autograd::GradReq::kWrite;
  if (req == "add") return autograd::GradReq::kAdd;
  if (req == "null") return autograd::GradReq::kNull;
  JANUS_THROW(ValueError, "grad_req: '{}' is not known, expected 'write', 'add' or 'null'", req);
}

std::vector<NDArray> to_outputs(const py::object& r, const std::string& block) {
  if (py::isinstance<NDArray>(r)) return {r.cast<NDArray>()};
  if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    return r.cast<std::vector<NDArray>>();
  }
  JANUS_THROW(TypeError, "{}: forward returned {}, expected an ndarray or a tuple of them", block,
              py::repr(r).cast<std::string>());
}

// A Block whose forward may be a Python method: Python subclasses of gluon.nn.Block derive
// from it. C++ (Block::operator(), and the trace of a hybridized block) calls forward; when the
// Python class defines one, it runs, taking the GIL only for that call.
// A C++ block of a Python class: assigning a Parameter or a Block to one of its attributes
// registers it (Block.__setattr__).
class PyAttrOwner {
 public:
  virtual ~PyAttrOwner() = default;
  virtual ParameterPtr add_param(const std::string& local, const Parameter& p) = 0;
  virtual void add_child_block(BlockPtr child, const std::string& local) = 0;

 protected:
  // The block's own parameter registered for `p` takes p's lr_mult and wd_mult too (its shape,
  // initializer and grad_req are registered with it).
  static ParameterPtr with_mults_of(const Parameter& p, ParameterPtr registered) {
    registered->set_lr_mult(p.lr_mult());
    registered->set_wd_mult(p.wd_mult());
    return registered;
  }
};

class PyBlock : public Block, public PyAttrOwner {
 public:
  using Block::Block;

  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override {
    {
      py::gil_scoped_acquire gil;
      py::function f = py::get_override(static_cast<const Block*>(this), "forward");
      if (f) {
        py::tuple args(xs.size());
        for (size_t i = 0; i < xs.size(); ++i) args[i] = py::cast(xs[i]);
        return to_outputs(f(*args), name());
      }
    }
    return Block::forward(xs);
  }

  NDArray forward(const NDArray& x) override {
    {
      py::gil_scoped_acquire gil;
      py::function f = py::get_override(static_cast<const Block*>(this), "forward");
      if (f) {
        std::vector<NDArray> ys = to_outputs(f(x), name());
        JANUS_CHECK(ys.size() == 1, ValueError, "{}: forward gave {} outputs, expected 1", name(),
                    ys.size());
        return ys[0];
      }
    }
    return Block::forward(x);
  }

  ParameterPtr add_param(const std::string& local, const Parameter& p) override {
    return with_mults_of(p, register_param(local, p.shape(), p.init(), p.grad_req()));
  }
  void add_child_block(BlockPtr child, const std::string& local) override {
    register_child(std::move(child), local);
  }
};

// A built-in layer subclassed in Python: a forward that the Python class defines replaces the
// layer's own (which it reaches as super().forward(x), the layer's "forward" binding below).
// pybind11 makes this alias only for Python subclasses, so the built-in layers themselves never
// take the GIL.
template <class T>
class PyLayer : public T {
 public:
  using T::T;

  NDArray forward(const NDArray& x) override {
    {
      py::gil_scoped_acquire gil;
      py::function f = py::get_override(static_cast<const T*>(this), "forward");
      if (f) {
        std::vector<NDArray> ys = to_outputs(f(x), this->name());
        JANUS_CHECK(ys.size() == 1, ValueError, "{}: forward gave {} outputs, expected 1",
                    this->name(), ys.size());
        return ys[0];
      }
    }
    return T::forward(x);
  }
};

// py::class_ of the built-in layer T: Python subclasses get PyLayer<T>, and "forward" runs T's
// own forward (not a Python override: super().forward(x) must not come back to it).
template <class T>
py::class_<T, Block, PyLayer<T>, std::shared_ptr<T>> layer_class(py::module_& m, const char* name) {
  py::class_<T, Block, PyLayer<T>, std::shared_ptr<T>> c(m, name);
  c.def("forward", [](T& b, const NDArray& x) {
    ReleaseGilInterruptibly release;
    return b.T::forward(x);
  });
  return c;
}

// py::init of a layer from `make<T>` (a function template building a T or a PyLayer<T> from
// the Python arguments).
#define JANUS_LAYER_INIT(make, T) py::init(&make<T>, &make<PyLayer<T>>)

// Keeps the Python objects of blocks that C++ holds (Sequential's children): a Python subclass'
// forward needs its Python object alive.
void keep_ref(py::handle self, py::handle child) {
  py::object o = py::reinterpret_borrow<py::object>(self);
  if (!py::hasattr(o, "_janus_refs")) o.attr("_janus_refs") = py::list();
  o.attr("_janus_refs").cast<py::list>().append(child);
}

py::object call_block(Block& b, const py::args& args) {
  std::vector<NDArray> xs;
  xs.reserve(args.size());
  for (py::handle h : args) xs.push_back(h.cast<NDArray>());
  std::vector<NDArray> ys;
  {
    ReleaseGilInterruptibly release;
    ys = b(xs);
  }
  if (ys.size() == 1) return py::cast(ys[0]);
  return py::cast(ys);  // a list, as MXNet returns several outputs
}

void bind_init(py::module_& m) {
  py::class_<PyInitializer>(m, "Initializer").def("__repr__", [](const PyInitializer& i) {
    return i.ptr->describe();
  });
  m.def("init_constant", [](double v) { return PyInitializer{nn::Constant(v)}; });
  m.def("init_array", [](const NDArray& v) {
    return PyInitializer{std::make_shared<const ArrayInit>(copyto(v, v.device()))};
  });
  m.def("init_zero", [] { return PyInitializer{nn::Zero()}; });
  m.def("init_one", [] { return PyInitializer{nn::One()}; });
  m.def("init_uniform", [](double s) { return PyInitializer{nn::Uniform(s)}; });
  m.def("init_normal", [](double s) { return PyInitializer{nn::Normal(s)}; });
  m.def("init_xavier", [](const std::string& rnd, const std::string& factor, double magnitude) {
    JANUS_CHECK(rnd == "uniform" || rnd == "gaussian", ValueError,
                "Xavier: rnd_type '{}' is not known, expected 'uniform' or 'gaussian'", rnd);
    JANUS_CHECK(factor == "avg" || factor == "in" || factor == "out", ValueError,
                "Xavier: factor_type '{}' is not known, expected 'avg', 'in' or 'out'", factor);
    return PyInitializer{
        nn::Xavier(rnd == "uniform" ? nn::XavierRandom::kUniform : nn::XavierRandom::kGaussian,
                   factor == "avg"  ? nn::XavierFactor::kAvg
                   : factor == "in" ? nn::XavierFactor::kIn
                                    : nn::XavierFactor::kOut,
                   magnitude)};
  });
}

void bind_params(py::module_& m) {
  py::class_<Parameter, ParameterPtr>(m, "Parameter")
      .def(py::init([](const std::string& name, py::object shape, py::object init, py::object dtype,
                       const std::string& grad_req, double lr_mult, double wd_mult) {
             Shape s;
             if (!shape.is_none()) s = Shape(to_pair(shape, 1));
             auto p = std::make_shared<Parameter>(name, s, to_init(init), to_dtype(dtype),
                                                  to_grad_req(grad_req));
             p->set_lr_mult(lr_mult);
             p->set_wd_mult(wd_mult);
             return p;
           }),
           py::arg("name") = "weight", py::arg("shape") = py::none(), py::arg("init") = py::none(),
           py::arg("dtype") = py::none(), py::arg("grad_req") = "write", py::arg("lr_mult") = 1.0,
           py::arg("wd_mult") = 1.0)
      .def_property_readonly("name", &Parameter::name)
      .def_property("lr_mult", &Parameter::lr_mult, &Parameter::set_lr_mult)
      .def_property("wd_mult", &Parameter::wd_mult, &Parameter::set_wd_mult)
      .def_property_readonly("shape",
                             [](const Parameter& p) {
                               py::tuple t(p.shape().ndim());
                               for (int i = 0; i < p.shape().ndim(); ++i) t[i] = p.shape()[i];
                               return t;
                             })
      .def_property_readonly("dtype", [](const Parameter& p) { return to_numpy_dtype(p.dtype()); })
      .def_property(
          "grad_req",
          [](const Parameter& p) {
            switch (p.grad_req()) {
              case autograd::GradReq::kNull:
                return "null";
              case autograd::GradReq::kAdd:
                return "add";
              default:
                return "write";
            }
          },
          [](Parameter& p, const std::string& r) { p.set_grad_req(to_grad_req(r)); })
      .def(
          "data",
          [](const Parameter& p, py::object ctx) {
            return ctx.is_none() ? p.data() : p.data(to_device(ctx));
          },
          py::arg("ctx") = py::none())
      .def(
          "grad",
          [](const Parameter& p, py::object ctx) {
            return ctx.is_none() ? p.grad() : p.grad(to_device(ctx));
          },
          py::arg("ctx") = py::none())
      .def("list_data", &Parameter::list_data)
      .def("list_grad", &Parameter::list_grad)
      .def("list_ctx", &Parameter::devices)
      .def("set_data", &Parameter::set_data, ReleaseGil())
      .def("zero_grad", &Parameter::zero_grad, ReleaseGil())
      .def(
          "initialize",
          [](Parameter& p, py::object init, py::object ctx, bool force_reinit) {
            nn::InitializerPtr i = to_init(init);
            p.initialize(i ? i : nn::Uniform(), to_devices(ctx), force_reinit);
          },
          py::arg("init") = py::none(), py::arg("ctx") = py::none(),
          py::arg("force_reinit") = false)
      .def("reset_ctx", [](Parameter& p, py::object ctx) { p.reset_devices(to_devices(ctx)); })
      .def("__repr__", [](const Parameter& p) {
        return fmt::format("Parameter {} (shape={}, dtype={})", p.name(), p.shape(), p.dtype());
      });

  py::class_<nn::ParameterDict>(m, "ParameterDict")
      .def("__len__", &nn::ParameterDict::size)
      .def("__getitem__", &nn::ParameterDict::at)
      .def("__contains__", &nn::ParameterDict::contains)
      .def("keys", &nn::ParameterDict::names)
      .def("__iter__", [](const nn::ParameterDict& d) { return py::iter(py::cast(d.names())); })
      .def("values",
           [](const nn::ParameterDict& d) {
             std::vector<ParameterPtr> out;
             for (const auto& [name, p] : d) out.push_back(p);
             return out;
           })
      .def("items",
           [](const nn::ParameterDict& d) {
             std::vector<std::pair<std::string, ParameterPtr>> out(d.begin(), d.end());
             return out;
           })
      .def(
          "initialize",
          [](nn::ParameterDict& d, py::object init, py::object ctx, bool verbose,
             bool force_reinit) {
            nn::InitializerPtr i = to_init(init);
            d.initialize(i ? i : nn::Uniform(), to_devices(ctx), force_reinit);
          },
          py::arg("init") = py::none(), py::arg("ctx") = py::none(), py::arg("verbose") = false,
          py::arg("force_reinit") = false)
      .def("zero_grad", &nn::ParameterDict::zero_grad, ReleaseGil())
      .def("reset_ctx",
           [](nn::ParameterDict& d, py::object ctx) { d.reset_devices(to_devices(ctx)); })
      .def("setattr",
           [](nn::ParameterDict& d, const std::string& name, py::object value) {
             JANUS_CHECK(name == "grad_req" || name == "lr_mult" || name == "wd_mult",
                         NotImplementedError,
                         "ParameterDict.setattr: '{}' cannot be set, expected 'grad_req', "
                         "'lr_mult' or 'wd_mult'",
                         name);
             if (name == "grad_req") {
               d.set_grad_req(to_grad_req(value.cast<std::string>()));
               return;
             }
             const double v = value.cast<double>();
             for (const auto& [n, p] : d) {
               if (name == "lr_mult") {
                 p->set_lr_mult(v);
               } else {
                 p->set_wd_mult(v);
               }
             }
           })
      .def("__repr__", [](const nn::ParameterDict& d) {
        std::string s = "ParameterDict(\n";
        for (const auto& [name, p] : d) s += fmt::format("  {}: shape={}\n", name, p->shape());
        return s + ")";
      });
}

// Gluon 1.x's block arguments that do not change what a layer computes (Janus names parameters
// by attribute), and a channels-first layout (the one Janus's layers compute), are accepted;
// any other keyword a binding does not name would be silently ignored, so it is refused.
void check_layer_kwargs(std::string_view layer, const py::kwargs& kwargs) {
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    if (name == "prefix" || name == "params") continue;
    if (name == "layout" && py::isinstance<py::str>(value) &&
        value.cast<std::string>().starts_with("NC")) {
      continue;
    }
    detail::throw_error<NotImplementedError>(std::source_location::current(),
                                             "{}: keyword argument {}={} is not supported by Janus",
                                             layer, name, py::repr(value).cast<std::string>());
  }
}

// The built-in layers from their Python arguments (see JANUS_LAYER_INIT).
template <class T>
std::shared_ptr<T> make_dense(int64_t units, py::object activation, bool use_bias, bool flatten,
                              py::object dtype, py::object weight_init, py::object bias_init,
                              int64_t in_units, const py::kwargs& kwargs) {
  check_layer_kwargs("Dense", kwargs);
  return std::make_shared<T>(units, activation_or_empty(activation), use_bias, flatten, in_units,
                             to_init(weight_init), to_init(bias_init));
}

// The number of spatial axes of a convolution layer (or its Python subclass).
template <class T>
constexpr int conv_dims() {
  if constexpr (std::is_base_of_v<nn::Conv1D, T> || std::is_base_of_v<nn::Conv1DTranspose, T>) {
    return 1;
  } else if constexpr (std::is_base_of_v<nn::Conv3D, T> ||
                       std::is_base_of_v<nn::Conv3DTranspose, T>) {
    return 3;
  } else {
    return 2;
  }
}

// MXNet's layout names for `dims` spatial axes: channels first (NCW, NCHW, NCDHW) or last (NWC,
// NHWC, NDHWC); anything else is a ValueError naming both.
nn::ChannelAxis channel_axis(std::string_view layer, int dims, const std::string& layout) {
  static constexpr std::array<std::string_view, 3> kFirst = {"NCW", "NCHW", "NCDHW"};
  static constexpr std::array<std::string_view, 3> kLast = {"NWC", "NHWC", "NDHWC"};
  const auto d = static_cast<size_t>(dims - 1);
  if (layout == kFirst[d]) return nn::ChannelAxis::kFirst;
  JANUS_CHECK(layout == kLast[d], ValueError,
              "{}: layout '{}' is not supported, expected '{}' or '{}'", layer, layout, kFirst[d],
              kLast[d]);
  return nn::ChannelAxis::kLast;
}

template <class T>
std::shared_ptr<T> make_conv(int64_t channels, py::object kernel, py::object strides,
                             py::object padding, py::object dilation, int64_t groups,
                             const std::string& layout, py::object activation, bool use_bias,
                             py::object weight_init, py::object bias_init, int64_t in_channels,
                             const py::kwargs& kwargs) {
  check_layer_kwargs("convolution layer", kwargs);
  constexpr size_t n = conv_dims<T>();
  const nn::ChannelAxis axis = channel_axis("convolution layer", n, layout);
  return std::make_shared<T>(channels, to_pair(kernel, n), to_pair(strides, n), to_pair(padding, n),
                             to_pair(dilation, n), groups, activation_or_empty(activation),
                             use_bias, in_channels, to_init(weight_init), to_init(bias_init), axis);
}

template <class T>
std::shared_ptr<T> make_conv_transpose(int64_t channels, py::object kernel, py::object strides,
                                       py::object padding, py::object output_padding,
                                       py::object dilation, int64_t groups,
                                       const std::string& layout, py::object activation,
                                       bool use_bias, py::object weight_init, py::object bias_init,
                                       int64_t in_channels, const py::kwargs& kwargs) {
  check_layer_kwargs("transposed convolution layer", kwargs);
  constexpr size_t n = conv_dims<T>();
  const nn::ChannelAxis axis = channel_axis("transposed convolution layer", n, layout);
  return std::make_shared<T>(channels, to_pair(kernel, n), to_pair(strides, n), to_pair(padding, n),
                             to_pair(output_padding, n), to_pair(dilation, n), groups,
                             activation_or_empty(activation), use_bias, in_channels,
                             to_init(weight_init), to_init(bias_init), axis);
}

// Binds one convolution layer with Gluon's arguments and defaults.
template <class T>
void bind_conv(py::module_& m, const char* name, const char* layout) {
  layer_class<T>(m, name)
      .def(JANUS_LAYER_INIT(make_conv, T), py::arg("channels"), py::arg("kernel_size"),
           py::arg("strides") = 1, py::arg("padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1, py::arg("layout") = layout, py::arg("activation") = py::none(),
           py::arg("use_bias") = true, py::arg("weight_initializer") = py::none(),
           py::arg("bias_initializer") = "zeros", py::arg("in_channels") = 0)
      .def_property_readonly("weight", &T::weight)
      .def_property_readonly("bias", &T::bias);
}

template <class T>
void bind_conv_transpose(py::module_& m, const char* name, const char* layout) {
  layer_class<T>(m, name)
      .def(JANUS_LAYER_INIT(make_conv_transpose, T), py::arg("channels"), py::arg("kernel_size"),
           py::arg("strides") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0,
           py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("layout") = layout,
           py::arg("activation") = py::none(), py::arg("use_bias") = true,
           py::arg("weight_initializer") = py::none(), py::arg("bias_initializer") = "zeros",
           py::arg("in_channels") = 0)
      .def_property_readonly("weight", &T::weight)
      .def_property_readonly("bias", &T::bias);
}

// MXNet's argument orders: MaxPool2D takes layout before ceil_mode, AvgPool2D after it.
template <class T>
std::shared_ptr<T> make_max_pool2d(py::object pool, py::object strides, py::object padding,
                                   const std::string& layout, bool ceil_mode,
                                   const py::kwargs& kwargs) {
  check_layer_kwargs("MaxPool2D", kwargs);
  return std::make_shared<T>(to_pair(pool),
                             strides.is_none() ? std::vector<int64_t>{} : to_pair(strides),
                             to_pair(padding), ceil_mode, channel_axis("MaxPool2D", 2, layout));
}

template <class T>
std::shared_ptr<T> make_avg_pool2d(py::object pool, py::object strides, py::object padding,
                                   bool ceil_mode, const std::string& layout,
                                   bool count_include_pad, const py::kwargs& kwargs) {
  check_layer_kwargs("AvgPool2D", kwargs);
  return std::make_shared<T>(
      to_pair(pool), strides.is_none() ? std::vector<int64_t>{} : to_pair(strides),
      to_pair(padding), count_include_pad, ceil_mode, channel_axis("AvgPool2D", 2, layout));
}

template <class T>
std::shared_ptr<T> make_global_avg_pool2d(const std::string& layout, const py::kwargs& kwargs) {
  check_layer_kwargs("GlobalAvgPool2D", kwargs);
  return std::make_shared<T>(channel_axis("GlobalAvgPool2D", 2, layout));
}

template <class T>
std::shared_ptr<T> make_dropout(double rate, const py::kwargs& kwargs) {
  check_layer_kwargs("Dropout", kwargs);
  return std::make_shared<T>(rate);
}

template <class T>
std::shared_ptr<T> make_flatten(const py::kwargs& kwargs) {
  check_layer_kwargs("Flatten", kwargs);
  return std::make_shared<T>();
}

template <class T>
std::shared_ptr<T> make_activation(const std::string& a, const py::kwargs& kwargs) {
  check_layer_kwargs("Activation", kwargs);
  return std::make_shared<T>(a);
}

template <class T>
std::shared_ptr<T> make_embedding(int64_t input_dim, int64_t output_dim, py::object dtype,
                                  py::object weight_init, const py::kwargs& kwargs) {
  check_layer_kwargs("Embedding", kwargs);
  return std::make_shared<T>(input_dim, output_dim, to_init(weight_init));
}

template <class T>
std::shared_ptr<T> make_layer_norm(int64_t axis, double epsilon, int64_t in_channels,
                                   const py::kwargs& kwargs) {
  check_layer_kwargs("LayerNorm", kwargs);
  return std::make_shared<T>(epsilon, in_channels, axis);
}

template <class T>
std::shared_ptr<T> make_group_norm(int64_t num_groups, double epsilon, bool center, bool scale,
                                   py::object beta_init, py::object gamma_init,
                                   const py::kwargs& kwargs) {
  check_layer_kwargs("GroupNorm", kwargs);
  return std::make_shared<T>(num_groups, epsilon, center, scale, to_init(beta_init),
                             to_init(gamma_init));
}

template <class T>
std::shared_ptr<T> make_instance_norm(int64_t axis, double epsilon, bool center, bool scale,
                                      py::object beta_init, py::object gamma_init,
                                      int64_t in_channels, const py::kwargs& kwargs) {
  check_layer_kwargs("InstanceNorm", kwargs);
  return std::make_shared<T>(axis, epsilon, center, scale, to_init(beta_init), to_init(gamma_init),
                             in_channels);
}

// The number of spatial axes of a 1-D or 3-D pooling layer (or its Python subclass), and its
// class name.
template <class T>
constexpr int pool_dims() {
  return std::is_base_of_v<nn::MaxPool1D, T> || std::is_base_of_v<nn::AvgPool1D, T> ||
                 std::is_base_of_v<nn::GlobalMaxPool1D, T> ||
                 std::is_base_of_v<nn::GlobalAvgPool1D, T>
             ? 1
             : 3;
}

template <class T>
constexpr std::string_view pool_name() {
  constexpr bool max = std::is_base_of_v<nn::MaxPool1D, T> || std::is_base_of_v<nn::MaxPool3D, T>;
  constexpr bool avg = std::is_base_of_v<nn::AvgPool1D, T> || std::is_base_of_v<nn::AvgPool3D, T>;
  constexpr bool gmax =
      std::is_base_of_v<nn::GlobalMaxPool1D, T> || std::is_base_of_v<nn::GlobalMaxPool3D, T>;
  constexpr bool one = pool_dims<T>() == 1;
  if constexpr (max) return one ? "MaxPool1D" : "MaxPool3D";
  if constexpr (avg) return one ? "AvgPool1D" : "AvgPool3D";
  if constexpr (gmax) return one ? "GlobalMaxPool1D" : "GlobalMaxPool3D";
  return one ? "GlobalAvgPool1D" : "GlobalAvgPool3D";
}

// A pool's keyword arguments checked, and its channel axis from `layout`.
template <class T>
nn::ChannelAxis pool_channel_axis(const std::string& layout, const py::kwargs& kwargs) {
  check_layer_kwargs(pool_name<T>(), kwargs);
  return channel_axis(pool_name<T>(), pool_dims<T>(), layout);
}

// MXNet's argument orders: the 1-D pools take layout before ceil_mode, the 3-D ones after it.
template <class T>
std::shared_ptr<T> make_max_pool(py::object pool, py::object strides, py::object padding,
                                 bool ceil_mode, const std::string& layout,
                                 const py::kwargs& kwargs) {
  const nn::ChannelAxis axis = pool_channel_axis<T>(layout, kwargs);
  constexpr size_t n = pool_dims<T>();
  return std::make_shared<T>(to_pair(pool, n),
                             strides.is_none() ? std::vector<int64_t>{} : to_pair(strides, n),
                             to_pair(padding, n), ceil_mode, axis);
}

template <class T>
std::shared_ptr<T> make_max_pool1d(py::object pool, py::object strides, py::object padding,
                                   const std::string& layout, bool ceil_mode,
                                   const py::kwargs& kwargs) {
  return make_max_pool<T>(pool, strides, padding, ceil_mode, layout, kwargs);
}

template <class T>
std::shared_ptr<T> make_avg_pool(py::object pool, py::object strides, py::object padding,
                                 bool ceil_mode, const std::string& layout, bool count_include_pad,
                                 const py::kwargs& kwargs) {
  const nn::ChannelAxis axis = pool_channel_axis<T>(layout, kwargs);
  constexpr size_t n = pool_dims<T>();
  return std::make_shared<T>(to_pair(pool, n),
                             strides.is_none() ? std::vector<int64_t>{} : to_pair(strides, n),
                             to_pair(padding, n), ceil_mode, count_include_pad, axis);
}

template <class T>
std::shared_ptr<T> make_avg_pool1d(py::object pool, py::object strides, py::object padding,
                                   const std::string& layout, bool ceil_mode,
                                   bool count_include_pad, const py::kwargs& kwargs) {
  return make_avg_pool<T>(pool, strides, padding, ceil_mode, layout, count_include_pad, kwargs);
}

template <class T>
std::shared_ptr<T> make_global_pool(const std::string& layout, const py::kwargs& kwargs) {
  return std::make_shared<T>(pool_channel_axis<T>(layout, kwargs));
}

template <class T>
std::shared_ptr<T> make_reflection_pad(py::object padding, const py::kwargs& kwargs) {
  check_layer_kwargs("ReflectionPad2D", kwargs);
  return std::make_shared<T>(to_pair(padding, 1));
}

template <class T>
std::shared_ptr<T> make_selu(const py::kwargs& kwargs) {
  check_layer_kwargs("SELU", kwargs);
  return std::make_shared<T>();
}

// MXNet's BatchNorm arguments that Janus's BatchNorm computes only at their defaults.
void check_batch_norm_defaults(std::string_view layer, const py::object& beta_init,
                               const py::object& gamma_init, const py::object& mean_init,
                               const py::object& var_init) {
  const std::pair<const char*, const py::object*> inits[] = {
      {"beta_initializer", &beta_init},
      {"gamma_initializer", &gamma_init},
      {"running_mean_initializer", &mean_init},
      {"running_variance_initializer", &var_init}};
  const char* defaults[] = {"zeros", "ones", "zeros", "ones"};
  for (size_t i = 0; i < 4; ++i) {
    const py::object& v = *inits[i].second;
    JANUS_CHECK(py::isinstance<py::str>(v) && v.cast<std::string>() == defaults[i],
                NotImplementedError, "{}: {}={} is not supported by Janus, expected '{}'", layer,
                inits[i].first, py::repr(v).cast<std::string>(), defaults[i]);
  }
}

template <class T>
std::shared_ptr<T> make_batch_norm(int64_t axis, double momentum, double epsilon, bool center,
                                   bool scale, bool use_global_stats, py::object beta_init,
                                   py::object gamma_init, py::object mean_init, py::object var_init,
                                   int64_t in_channels, const py::kwargs& kwargs) {
  check_layer_kwargs("BatchNorm", kwargs);
  check_batch_norm_defaults("BatchNorm", beta_init, gamma_init, mean_init, var_init);
  return std::make_shared<T>(axis, momentum, epsilon, center, scale, in_channels, use_global_stats);
}

template <class T>
std::shared_ptr<T> make_batch_norm_relu(int64_t axis, double momentum, double epsilon, bool center,
                                        bool scale, bool use_global_stats, py::object beta_init,
                                        py::object gamma_init, py::object mean_init,
                                        py::object var_init, int64_t in_channels,
                                        const py::kwargs& kwargs) {
  check_layer_kwargs("BatchNormReLU", kwargs);
  check_batch_norm_defaults("BatchNormReLU", beta_init, gamma_init, mean_init, var_init);
  return std::make_shared<T>(axis, momentum, epsilon, center, scale, in_channels, use_global_stats);
}

template <class T>
std::shared_ptr<T> make_sync_batch_norm(int64_t in_channels, py::object num_devices,
                                        double momentum, double epsilon, bool center, bool scale,
                                        bool use_global_stats, py::object beta_init,
                                        py::object gamma_init, py::object mean_init,
                                        py::object var_init, const py::kwargs& kwargs) {
  check_layer_kwargs("SyncBatchNorm", kwargs);
  check_batch_norm_defaults("SyncBatchNorm", beta_init, gamma_init, mean_init, var_init);
  // None (MXNet's default): the number of devices the parameters have replicas on.
  const int64_t devices = num_devices.is_none() ? 0 : num_devices.cast<int64_t>();
  JANUS_CHECK(num_devices.is_none() || devices >= 1, ValueError,
              "SyncBatchNorm: num_devices is {}, expected a positive number (or None: the number "
              "of devices its parameters have replicas on)",
              devices);
  return std::make_shared<T>(in_channels, devices, momentum, epsilon, center, scale,
                             use_global_stats);
}

template <class T>
std::shared_ptr<T> make_pixel_shuffle(py::object factor, const py::kwargs& kwargs) {
  check_layer_kwargs("PixelShuffle", kwargs);
  constexpr size_t n = std::is_base_of_v<nn::PixelShuffle1D, T>   ? 1
                       : std::is_base_of_v<nn::PixelShuffle2D, T> ? 2
                                                                  : 3;
  return std::make_shared<T>(to_pair(factor, n));
}

void bind_blocks(py::module_& m) {
  py::class_<Block, PyBlock, BlockPtr>(m, "Block", py::dynamic_attr())
      .def(py::init([](py::object prefix, py::object params, const py::kwargs&) {
             return std::make_shared<PyBlock>(prefix.is_none() ? std::string("block")
                                                               : prefix.cast<std::string>());
           }),
           py::arg("prefix") = py::none(), py::arg("params") = py::none())
      .def("__call__", &call_block)
      .def("forward", [](Block& b, const py::args& args) { return call_block(b, args); })
      .def("__setattr__",
           [](py::object self, py::str name, py::object value) {
             auto* pb = dynamic_cast<PyAttrOwner*>(self.cast<Block*>());
             const std::string local = name;
             if (pb != nullptr && !local.empty() && local[0] != '_') {
               if (py::isinstance<Block>(value)) {
                 pb->add_child_block(value.cast<BlockPtr>(), local);
               } else if (py::isinstance<Parameter>(value)) {
                 value = py::cast(pb->add_param(local, value.cast<Parameter&>()));
               }
             }
             if (PyObject_GenericSetAttr(self.ptr(), name.ptr(), value.ptr()) != 0) {
               throw py::error_already_set();
             }
           })
      .def_property_readonly("name", &Block::name)
      .def_property_readonly("prefix", &Block::name)
      .def(
          "initialize",
          [](Block& b, py::object init, py::object ctx, bool verbose, bool force_reinit) {
            nn::InitializerPtr i = to_init(init);
            std::vector<Device> devices = to_devices(ctx);
            ReleaseGilInterruptibly release;
            b.initialize(i ? i : nn::Uniform(), devices, force_reinit);
          },
          py::arg("init") = py::none(), py::arg("ctx") = py::none(), py::arg("verbose") = false,
          py::arg("force_reinit") = false)
      .def(
          "hybridize",
          [](Block& b, bool active, bool static_alloc, bool static_shape, const py::kwargs&) {
            b.hybridize(active, {.static_alloc = static_alloc, .static_shape = static_shape});
          },
          py::arg("active") = true, py::arg("static_alloc") = false,
          py::arg("static_shape") = false)
      .def_property_readonly("_trace_count", &Block::trace_count)
      .def_property_readonly("_last_trace_reason", &Block::last_trace_reason)
      .def(
          "export",
          [](const Block& b, const std::string& path, int epoch) { b.export_model(path, epoch); },
          py::arg("path"), py::arg("epoch") = 0, ReleaseGil())
      .def(
          "collect_params",
          [](const Block& b, py::object select) {
            return b.collect_params(select.is_none() ? "" : select.cast<std::string>());
          },
          py::arg("select") = py::none())
      .def(
          "save_parameters",
          [](const Block& b, const std::string& path) { nn::save_parameters(b, path); },
          ReleaseGil())
      .def(
          "load_parameters",
          [](Block& b, const std::string& path, py::object ctx, bool allow_missing,
             bool ignore_extra) {
            std::optional<Device> d;
            if (!ctx.is_none()) d = to_device(ctx);
            ReleaseGilInterruptibly release;
            nn::load_parameters(b, path, d, allow_missing, ignore_extra);
          },
          py::arg("filename"), py::arg("ctx") = py::none(), py::arg("allow_missing") = false,
          py::arg("ignore_extra") = false)
      .def("reset_ctx", [](Block& b, py::object ctx) { b.reset_devices(to_devices(ctx)); })
      .def("summary", [](const Block& b, py::args) { py::print(b.summary()); })
      .def("__repr__", [](const Block& b) { return b.summary(); });

  py::class_<nn::Sequential, Block, std::shared_ptr<nn::Sequential>>(m, "Sequential")
      .def(py::init([](const py::kwargs&) { return std::make_shared<nn::Sequential>(); }))
      .def("add",
           [](py::object self, const py::args& blocks) {
             auto& seq = self.cast<nn::Sequential&>();
             for (py::handle b : blocks) {
               seq.add(b.cast<BlockPtr>());
               keep_ref(self, b);
             }
           })
      .def("__len__", &nn::Sequential::size)
      .def("__getitem__", [](const nn::Sequential& s, int64_t i) {
        const auto n = static_cast<int64_t>(s.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("Sequential index out of range");
        return s[static_cast<size_t>(i)];
      });
  py::class_<nn::Concurrent, Block, std::shared_ptr<nn::Concurrent>>(m, "Concurrent")
      .def(py::init([](int64_t axis, const py::kwargs&) {
             return std::make_shared<nn::Concurrent>(axis);
           }),
           py::arg("axis") = -1)
      .def("add", [](py::object self, const py::args& blocks) {
        auto& c = self.cast<nn::Concurrent&>();
        for (py::handle b : blocks) {
          c.add(b.cast<BlockPtr>());
          keep_ref(self, b);
        }
      });

  layer_class<nn::Dense>(m, "Dense")
      .def(JANUS_LAYER_INIT(make_dense, nn::Dense), py::arg("units"),
           py::arg("activation") = py::none(), py::arg("use_bias") = true,
           py::arg("flatten") = true, py::arg("dtype") = "float32",
           py::arg("weight_initializer") = py::none(), py::arg("bias_initializer") = "zeros",
           py::arg("in_units") = 0)
      .def_property_readonly("weight", &nn::Dense::weight)
      .def_property_readonly("bias", &nn::Dense::bias);
  bind_conv<nn::Conv1D>(m, "Conv1D", "NCW");
  bind_conv<nn::Conv2D>(m, "Conv2D", "NCHW");
  bind_conv<nn::Conv3D>(m, "Conv3D", "NCDHW");
  bind_conv_transpose<nn::Conv1DTranspose>(m, "Conv1DTranspose", "NCW");
  bind_conv_transpose<nn::Conv2DTranspose>(m, "Conv2DTranspose", "NCHW");
  bind_conv_transpose<nn::Conv3DTranspose>(m, "Conv3DTranspose", "NCDHW");
  layer_class<nn::MaxPool2D>(m, "MaxPool2D")
      .def(JANUS_LAYER_INIT(make_max_pool2d, nn::MaxPool2D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("layout") = "NCHW",
           py::arg("ceil_mode") = false);
  layer_class<nn::AvgPool2D>(m, "AvgPool2D")
      .def(JANUS_LAYER_INIT(make_avg_pool2d, nn::AvgPool2D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("ceil_mode") = false,
           py::arg("layout") = "NCHW", py::arg("count_include_pad") = true);
  layer_class<nn::GlobalAvgPool2D>(m, "GlobalAvgPool2D")
      .def(JANUS_LAYER_INIT(make_global_avg_pool2d, nn::GlobalAvgPool2D),
           py::arg("layout") = "NCHW");
  layer_class<nn::MaxPool1D>(m, "MaxPool1D")
      .def(JANUS_LAYER_INIT(make_max_pool1d, nn::MaxPool1D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("layout") = "NCW",
           py::arg("ceil_mode") = false);
  layer_class<nn::MaxPool3D>(m, "MaxPool3D")
      .def(JANUS_LAYER_INIT(make_max_pool, nn::MaxPool3D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("ceil_mode") = false,
           py::arg("layout") = "NCDHW");
  layer_class<nn::AvgPool1D>(m, "AvgPool1D")
      .def(JANUS_LAYER_INIT(make_avg_pool1d, nn::AvgPool1D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("layout") = "NCW",
           py::arg("ceil_mode") = false, py::arg("count_include_pad") = true);
  layer_class<nn::AvgPool3D>(m, "AvgPool3D")
      .def(JANUS_LAYER_INIT(make_avg_pool, nn::AvgPool3D), py::arg("pool_size") = 2,
           py::arg("strides") = py::none(), py::arg("padding") = 0, py::arg("ceil_mode") = false,
           py::arg("layout") = "NCDHW", py::arg("count_include_pad") = true);
  layer_class<nn::GlobalMaxPool1D>(m, "GlobalMaxPool1D")
      .def(JANUS_LAYER_INIT(make_global_pool, nn::GlobalMaxPool1D), py::arg("layout") = "NCW");
  layer_class<nn::GlobalMaxPool3D>(m, "GlobalMaxPool3D")
      .def(JANUS_LAYER_INIT(make_global_pool, nn::GlobalMaxPool3D), py::arg("layout") = "NCDHW");
  layer_class<nn::GlobalAvgPool1D>(m, "GlobalAvgPool1D")
      .def(JANUS_LAYER_INIT(make_global_pool, nn::GlobalAvgPool1D), py::arg("layout") = "NCW");
  layer_class<nn::GlobalAvgPool3D>(m, "GlobalAvgPool3D")
      .def(JANUS_LAYER_INIT(make_global_pool, nn::GlobalAvgPool3D), py::arg("layout") = "NCDHW");
  layer_class<nn::ReflectionPad2D>(m, "ReflectionPad2D")
      .def(JANUS_LAYER_INIT(make_reflection_pad, nn::ReflectionPad2D), py::arg("padding") = 0);
  layer_class<nn::SELU>(m, "SELU").def(JANUS_LAYER_INIT(make_selu, nn::SELU));
  layer_class<nn::BatchNormReLU>(m, "BatchNormReLU")
      .def(JANUS_LAYER_INIT(make_batch_norm_relu, nn::BatchNormReLU), py::arg("axis") = 1,
           py::arg("momentum") = 0.9, py::arg("epsilon") = 1e-5, py::arg("center") = true,
           py::arg("scale") = true, py::arg("use_global_stats") = false,
           py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones",
           py::arg("running_mean_initializer") = "zeros",
           py::arg("running_variance_initializer") = "ones", py::arg("in_channels") = 0);
  layer_class<nn::SyncBatchNorm>(m, "SyncBatchNorm")
      .def(JANUS_LAYER_INIT(make_sync_batch_norm, nn::SyncBatchNorm), py::arg("in_channels") = 0,
           py::arg("num_devices") = py::none(), py::arg("momentum") = 0.9,
           py::arg("epsilon") = 1e-5, py::arg("center") = true, py::arg("scale") = true,
           py::arg("use_global_stats") = false, py::arg("beta_initializer") = "zeros",
           py::arg("gamma_initializer") = "ones", py::arg("running_mean_initializer") = "zeros",
           py::arg("running_variance_initializer") = "ones");
  layer_class<nn::PixelShuffle1D>(m, "PixelShuffle1D")
      .def(JANUS_LAYER_INIT(make_pixel_shuffle, nn::PixelShuffle1D), py::arg("factor"));
  layer_class<nn::PixelShuffle2D>(m, "PixelShuffle2D")
      .def(JANUS_LAYER_INIT(make_pixel_shuffle, nn::PixelShuffle2D), py::arg("factor"));
  layer_class<nn::PixelShuffle3D>(m, "PixelShuffle3D")
      .def(JANUS_LAYER_INIT(make_pixel_shuffle, nn::PixelShuffle3D), py::arg("factor"));
  layer_class<nn::BatchNorm>(m, "BatchNorm")
      .def(JANUS_LAYER_INIT(make_batch_norm, nn::BatchNorm), py::arg("axis") = 1,
           py::arg("momentum") = 0.9, py::arg("epsilon") = 1e-5, py::arg("center") = true,
           py::arg("scale") = true, py::arg("use_global_stats") = false,
           py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones",
           py::arg("running_mean_initializer") = "zeros",
           py::arg("running_variance_initializer") = "ones", py::arg("in_channels") = 0);
  layer_class<nn::Dropout>(m, "Dropout")
      .def(JANUS_LAYER_INIT(make_dropout, nn::Dropout), py::arg("rate"));
  layer_class<nn::Flatten>(m, "Flatten").def(JANUS_LAYER_INIT(make_flatten, nn::Flatten));
  layer_class<nn::Activation>(m, "Activation")
      .def(JANUS_LAYER_INIT(make_activation, nn::Activation), py::arg("activation"));
  layer_class<nn::Embedding>(m, "Embedding")
      .def(JANUS_LAYER_INIT(make_embedding, nn::Embedding), py::arg("input_dim"),
           py::arg("output_dim"), py::arg("dtype") = "float32",
           py::arg("weight_initializer") = py::none())
      .def_property_readonly("weight", &nn::Embedding::weight);
  layer_class<nn::LayerNorm>(m, "LayerNorm")
      .def(JANUS_LAYER_INIT(make_layer_norm, nn::LayerNorm), py::arg("axis") = -1,
           py::arg("epsilon") = 1e-5, py::arg("in_channels") = 0);
  layer_class<nn::GroupNorm>(m, "GroupNorm")
      .def(JANUS_LAYER_INIT(make_group_norm, nn::GroupNorm), py::arg("num_groups") = 1,
           py::arg("epsilon") = 1e-5, py::arg("center") = true, py::arg("scale") = true,
           py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones")
      .def_property_readonly("gamma", &nn::GroupNorm::gamma)
      .def_property_readonly("beta", &nn::GroupNorm::beta);
  layer_class<nn::InstanceNorm>(m, "InstanceNorm")
      .def(JANUS_LAYER_INIT(make_instance_norm, nn::InstanceNorm), py::arg("axis") = 1,
           py::arg("epsilon") = 1e-5, py::arg("center") = true, py::arg("scale") = false,
           py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones",
           py::arg("in_channels") = 0)
      .def_property_readonly("gamma", &nn::InstanceNorm::gamma)
      .def_property_readonly("beta", &nn::InstanceNorm::beta);
  py::class_<nn::SymbolBlock, Block, std::shared_ptr<nn::SymbolBlock>>(m, "SymbolBlock")
      .def_static(
          "imports",
          [](const std::string& symbol_file, py::object input_names, const std::string& params,
             py::object ctx) {
            std::vector<std::string> names;
            if (py::isinstance<py::str>(input_names)) {
              names.push_back(input_names.cast<std::string>());
            } else {
              names = input_names.cast<std::vector<std::string>>();
            }
            return nn::SymbolBlock::imports(symbol_file, names, params, to_device(ctx));
          },
          py::arg("symbol_file"), py::arg("input_names"), py::arg("param_file") = "",
          py::arg("ctx") = py::none());
}

nn::RNNMode to_rnn_mode(const std::string& mode) {
  if (mode == "rnn_relu") return nn::RNNMode::kRNNRelu;
  if (mode == "rnn_tanh") return nn::RNNMode::kRNNTanh;
  if (mode == "lstm") return nn::RNNMode::kLSTM;
  if (mode == "gru") return nn::RNNMode::kGRU;
  JANUS_THROW(ValueError,
              "rnn: mode '{}' is not known, expected 'rnn_relu', 'rnn_tanh', 'lstm' "
              "or 'gru'",
              mode);
}

nn::RNNInit to_rnn_init(py::object i2h_weight, py::object h2h_weight, py::object i2h_bias,
                        py::object h2h_bias) {
  return {to_init(i2h_weight), to_init(h2h_weight), to_init(i2h_bias), to_init(h2h_bias)};
}

// A recurrent cell written in Python (gluon.rnn.RecurrentCell's subclasses): C++ (unroll, the
// cells that wrap it, a hybridized trace) calls its Python `forward(inputs, states)`, which
// returns (output, [states]), and its `state_info(batch_size)`, a list of {'shape': ...}.
class PyRecurrentCell : public nn::RecurrentCell, public PyAttrOwner {
 public:
  using nn::RecurrentCell::RecurrentCell;

  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const nn::RecurrentCell*>(this), "forward");
    JANUS_CHECK(static_cast<bool>(f), NotImplementedError,
                "{}: a recurrent cell defines neither forward(inputs, states) nor "
                "hybrid_forward(F, inputs, states)",
                name());
    JANUS_CHECK(!xs.empty(), ValueError, "{}: called without an input", name());
    // The count only: a Python cell's state_info may leave extents to the data.
    const size_t expected = state_shapes(0).size();
    JANUS_CHECK(xs.size() - 1 == expected, ValueError,
                "{}: called with {} states, expected {} (state_info gives them)", name(),
                xs.size() - 1, expected);
    py::list states;
    for (size_t i = 1; i < xs.size(); ++i) states.append(py::cast(xs[i]));
    py::object r = f(xs[0], states);
    JANUS_CHECK((py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) && py::len(r) == 2,
                TypeError,
                "{}: forward returned {}, expected (output, [states]) (a recurrent cell's step)",
                name(), py::repr(r).cast<std::string>());
    std::vector<NDArray> out{r[py::int_(0)].cast<NDArray>()};
    py::object next = r[py::int_(1)];
    if (py::isinstance<NDArray>(next)) {
      out.push_back(next.cast<NDArray>());
    } else {
      for (py::handle h : next) out.push_back(h.cast<NDArray>());
    }
    return out;
  }

  std::vector<Shape> state_shapes(int64_t batch_size) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const nn::RecurrentCell*>(this), "state_info");
    JANUS_CHECK(static_cast<bool>(f), NotImplementedError,
                "{}: a recurrent cell must define state_info(batch_size)", name());
    std::vector<Shape> out;
    for (py::handle info : f(batch_size)) {
      JANUS_CHECK(py::isinstance<py::dict>(info) && info.contains("shape"), TypeError,
                  "{}: state_info gave {}, expected a dict with a 'shape' for each state", name(),
                  py::repr(info).cast<std::string>());
      out.emplace_back(info["shape"].cast<std::vector<int64_t>>());
    }
    return out;
  }

  ParameterPtr add_param(const std::string& local, const Parameter& p) override {
    return with_mults_of(p, register_param(local, p.shape(), p.init(), p.grad_req()));
  }
  void add_child_block(BlockPtr child, const std::string& local) override {
    register_child(std::move(child), local);
  }
};

py::tuple unrolled_to_python(nn::RecurrentCell::Unrolled u) {
  return py::make_tuple(py::cast(u.outputs), py::cast(u.states));
}

// The recurrent layers and cells; janus/gluon/rnn.py gives them Gluon's classes and call forms.
void bind_rnn(py::module_& m) {
  py::class_<nn::RecurrentLayer, Block, std::shared_ptr<nn::RecurrentLayer>>(m, "RecurrentLayer")
      .def(py::init([](const std::string& mode, int64_t hidden_size, int64_t num_layers,
                       const std::string& layout, double dropout, bool bidirectional,
                       int64_t input_size, py::object i2h_weight, py::object h2h_weight,
                       py::object i2h_bias, py::object h2h_bias, int64_t projection_size,
                       py::object h2r_weight, std::optional<double> state_clip_min,
                       std::optional<double> state_clip_max, bool state_clip_nan,
                       bool use_sequence_length) {
             const nn::RNNMode md = to_rnn_mode(mode);
             return std::make_shared<nn::RecurrentLayer>(
                 md, hidden_size,
                 nn::RecurrentLayerOptions{
                     .num_layers = num_layers,
                     .layout = nn::parse_rnn_layout(layout, nn::rnn_mode_name(md)),
                     .dropout = dropout,
                     .bidirectional = bidirectional,
                     .input_size = input_size,
                     .init = to_rnn_init(i2h_weight, h2h_weight, i2h_bias, h2h_bias),
                     .projection_size = projection_size,
                     .h2r_init = to_init(h2r_weight),
                     .state_clip_min = state_clip_min,
                     .state_clip_max = state_clip_max,
                     .state_clip_nan = state_clip_nan,
                     .use_sequence_length = use_sequence_length});
           }),
           py::arg("mode"), py::arg("hidden_size"), py::arg("num_layers"), py::arg("layout"),
           py::arg("dropout"), py::arg("bidirectional"), py::arg("input_size"),
           py::arg("i2h_weight_initializer"), py::arg("h2h_weight_initializer"),
           py::arg("i2h_bias_initializer"), py::arg("h2h_bias_initializer"),
           py::arg("projection_size") = 0, py::arg("h2r_weight_initializer") = py::none(),
           py::arg("state_clip_min") = std::nullopt, py::arg("state_clip_max") = std::nullopt,
           py::arg("state_clip_nan") = false, py::arg("use_sequence_length") = false)
      .def(
          "begin_state",
          [](const nn::RecurrentLayer& l, int64_t batch_size, py::object ctx) {
            return l.begin_state(batch_size, ctx.is_none() ? cpu() : to_device(ctx));
          },
          py::arg("batch_size"), py::arg("ctx") = py::none());

  py::class_<nn::RecurrentCell, Block, PyRecurrentCell, std::shared_ptr<nn::RecurrentCell>>(
      m, "RecurrentCell", py::dynamic_attr())
      .def(py::init([](py::object prefix, py::object, const py::kwargs&) {
             return std::make_shared<PyRecurrentCell>(
                 prefix.is_none() ? std::string("recurrentcell") : prefix.cast<std::string>());
           }),
           py::arg("prefix") = py::none(), py::arg("params") = py::none())
      .def_property_readonly("_hybridized", &nn::RecurrentCell::is_hybridized)
      .def("_state_shapes",
           [](const nn::RecurrentCell& c, int64_t batch_size) {
             std::vector<py::tuple> out;
             for (const Shape& s : c.state_shapes(batch_size))
               out.push_back(py::tuple(py::cast(s.dims())));
             return out;
           })
      .def(
          "begin_state",
          [](const nn::RecurrentCell& c, int64_t batch_size, py::object ctx) {
            return c.begin_state(batch_size, ctx.is_none() ? cpu() : to_device(ctx));
          },
          py::arg("batch_size"), py::arg("ctx") = py::none())
      .def(
          "_unroll",
          [](nn::RecurrentCell& c, int64_t length, const std::vector<NDArray>& inputs,
             const std::vector<NDArray>& states, const std::string& layout, bool merge,
             std::optional<NDArray> valid_length) {
            const nn::RNNLayout lay = nn::parse_rnn_layout(layout, c.name());
            nn::RecurrentCell::Unrolled u;
            {
              ReleaseGilInterruptibly release;
              u = c.unroll(length, inputs, states, lay, merge, valid_length.value_or(NDArray()));
            }
            return unrolled_to_python(std::move(u));
          },
          py::arg("length"), py::arg("inputs"), py::arg("states"), py::arg("layout"),
          py::arg("merge_outputs"), py::arg("valid_length") = std::nullopt);
  py::class_<nn::LSTMPCell, nn::RecurrentCell, std::shared_ptr<nn::LSTMPCell>>(m, "LSTMPCell")
      .def(py::init([](int64_t hidden_size, int64_t projection_size, int64_t input_size,
                       py::object i2h_weight, py::object h2h_weight, py::object h2r_weight,
                       py::object i2h_bias, py::object h2h_bias) {
             return std::make_shared<nn::LSTMPCell>(
                 hidden_size, projection_size, input_size,
                 to_rnn_init(i2h_weight, h2h_weight, i2h_bias, h2h_bias), to_init(h2r_weight));
           }),
           py::arg("hidden_size"), py::arg("projection_size"), py::arg("input_size"),
           py::arg("i2h_weight_initializer"), py::arg("h2h_weight_initializer"),
           py::arg("h2r_weight_initializer"), py::arg("i2h_bias_initializer"),
           py::arg("h2h_bias_initializer"));
  py::class_<nn::GatedCell, nn::RecurrentCell, std::shared_ptr<nn::GatedCell>>(m, "GatedCell")
      .def(py::init([](const std::string& mode, int64_t hidden_size, int64_t input_size,
                       py::object i2h_weight, py::object h2h_weight, py::object i2h_bias,
                       py::object h2h_bias) {
             return std::make_shared<nn::GatedCell>(
                 to_rnn_mode(mode), hidden_size, input_size,
                 to_rnn_init(i2h_weight, h2h_weight, i2h_bias, h2h_bias));
           }),
           py::arg("mode"), py::arg("hidden_size"), py::arg("input_size"),
           py::arg("i2h_weight_initializer"), py::arg("h2h_weight_initializer"),
           py::arg("i2h_bias_initializer"), py::arg("h2h_bias_initializer"));
  py::class_<nn::SequentialRNNCell, nn::RecurrentCell, std::shared_ptr<nn::SequentialRNNCell>>(
      m, "SequentialRNNCell")
      .def(py::init([](const py::kwargs&) { return std::make_shared<nn::SequentialRNNCell>(); }))
      .def("add",
           [](py::object self, py::object cell) {
             if (!py::isinstance<nn::RecurrentCell>(cell)) {
               JANUS_THROW(TypeError, "SequentialRNNCell.add: expected a recurrent cell, got {}",
                           py::repr(cell).cast<std::string>());
             }
             self.cast<nn::SequentialRNNCell&>().add(
                 cell.cast<std::shared_ptr<nn::RecurrentCell>>());
             keep_ref(self, cell);
           })
      .def("__len__", &nn::SequentialRNNCell::size)
      .def("__getitem__", [](const nn::SequentialRNNCell& s, int64_t i) {
        const auto n = static_cast<int64_t>(s.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("SequentialRNNCell index out of range");
        return s[static_cast<size_t>(i)];
      });
  // The cells that wrap cells keep their Python objects alive (keep_ref), as add() does.
  auto as_cell = [](py::object cell, const char* where) {
    if (!py::isinstance<nn::RecurrentCell>(cell)) {
      JANUS_THROW(TypeError, "{}: expected a recurrent cell, got {}", where,
                  py::repr(cell).cast<std::string>());
    }
    return cell.cast<std::shared_ptr<nn::RecurrentCell>>();
  };
  py::class_<nn::BidirectionalCell, nn::RecurrentCell, std::shared_ptr<nn::BidirectionalCell>>(
      m, "BidirectionalCell")
      .def(py::init([as_cell](py::object l_cell, py::object r_cell) {
             return std::make_shared<nn::BidirectionalCell>(as_cell(l_cell, "BidirectionalCell"),
                                                            as_cell(r_cell, "BidirectionalCell"));
           }),
           py::arg("l_cell"), py::arg("r_cell"));
  py::class_<nn::DropoutCell, nn::RecurrentCell, std::shared_ptr<nn::DropoutCell>>(m, "DropoutCell")
      .def(py::init<double, std::vector<int64_t>>(), py::arg("rate"),
           py::arg("axes") = std::vector<int64_t>{});
  py::class_<nn::ResidualCell, nn::RecurrentCell, std::shared_ptr<nn::ResidualCell>>(m,
                                                                                     "ResidualCell")
      .def(py::init([as_cell](py::object base_cell) {
             return std::make_shared<nn::ResidualCell>(as_cell(base_cell, "ResidualCell"));
           }),
           py::arg("base_cell"));
  py::class_<nn::ZoneoutCell, nn::RecurrentCell, std::shared_ptr<nn::ZoneoutCell>>(m, "ZoneoutCell")
      .def(py::init([as_cell](py::object base_cell, double zoneout_outputs, double zoneout_states) {
             return std::make_shared<nn::ZoneoutCell>(as_cell(base_cell, "ZoneoutCell"),
                                                      zoneout_outputs, zoneout_states);
           }),
           py::arg("base_cell"), py::arg("zoneout_outputs") = 0.0, py::arg("zoneout_states") = 0.0)
      .def("reset", &nn::ZoneoutCell::reset);
}

void bind_losses(py::module_& m) {
  m.def("ctc_loss", &ctc_loss, py::arg("logits"), py::arg("labels"), py::arg("data_lengths"),
        py::arg("label_lengths"), ReleaseGil());
  py::class_<nn::Loss, std::shared_ptr<nn::Loss>>(m, "Loss")
      .def(
          "__call__",
          [](const nn::Loss& l, const NDArray& pred, const NDArray& label,
             std::optional<NDArray> weight) {
            NDArray out = l(pred, label);
            return weight ? out * *weight : out;
          },
          py::arg("pred"), py::arg("label"), py::arg("sample_weight") = std::nullopt, ReleaseGil())
      .def("__repr__", &nn::Loss::describe)
      .def("hybridize", [](const nn::Loss&, py::args, py::kwargs) {});
  py::class_<nn::L2Loss, nn::Loss, std::shared_ptr<nn::L2Loss>>(m, "L2Loss")
      .def(py::init([](py::args, py::kwargs) { return std::make_shared<nn::L2Loss>(); }));
  py::class_<nn::L1Loss, nn::Loss, std::shared_ptr<nn::L1Loss>>(m, "L1Loss")
      .def(py::init([](py::args, py::kwargs) { return std::make_shared<nn::L1Loss>(); }));
  py::class_<nn::SoftmaxCrossEntropyLoss, nn::Loss, std::shared_ptr<nn::SoftmaxCrossEntropyLoss>>(
      m, "SoftmaxCrossEntropyLoss")
      .def(py::init([](int64_t axis, bool sparse_label, bool from_logits, const py::kwargs&) {
             JANUS_CHECK(axis == -1 && sparse_label && !from_logits, NotImplementedError,
                         "SoftmaxCrossEntropyLoss: only axis=-1, sparse_label=True, "
                         "from_logits=False are supported");
             return std::make_shared<nn::SoftmaxCrossEntropyLoss>();
           }),
           py::arg("axis") = -1, py::arg("sparse_label") = true, py::arg("from_logits") = false);
  py::class_<nn::SigmoidBinaryCrossEntropyLoss, nn::Loss,
             std::shared_ptr<nn::SigmoidBinaryCrossEntropyLoss>>(m, "SigmoidBinaryCrossEntropyLoss")
      .def(py::init([](bool from_sigmoid, const py::kwargs&) {
             return std::make_shared<nn::SigmoidBinaryCrossEntropyLoss>(from_sigmoid);
           }),
           py::arg("from_sigmoid") = false);
}

nn::ParameterDict to_param_dict(const py::object& params) {
  if (py::isinstance<nn::ParameterDict>(params)) return params.cast<nn::ParameterDict>();
  nn::ParameterDict out;
  if (py::isinstance<py::dict>(params)) {
    for (auto [k, v] : params.cast<py::dict>()) {
      out.add(k.cast<std::string>(), v.cast<ParameterPtr>());
    }
    return out;
  }
  int i = 0;
  for (py::handle h : params) out.add(std::to_string(i++), h.cast<ParameterPtr>());
  return out;
}

}  // namespace

optim::OptimizerPtr to_optimizer(const std::string& name, const py::object& options) {
  optim::OptimizerOptions o;
  double lr = 0.01;
  double rescale = 1.0;
  if (!options.is_none()) {
    for (auto [k, v] : options.cast<py::dict>()) {
      const std::string key = k.cast<std::string>();
      const double val = v.cast<double>();
      if (key == "learning_rate")
        lr = val;
      else if (key == "momentum")
        o.momentum = val;
      else if (key == "wd")
        o.wd = val;
      else if (key == "beta1")
        o.beta1 = val;
      else if (key == "beta2")
        o.beta2 = val;
      else if (key == "epsilon")
        o.epsilon = val;
      else if (key == "clip_gradient")
        o.clip_gradient = val;
      else if (key == "rescale_grad")
        rescale = val;
      else
        JANUS_THROW(ValueError,
                    "optimizer '{}': parameter '{}' is not known, expected learning_rate, "
                    "momentum, wd, beta1, beta2, epsilon, clip_gradient or rescale_grad",
                    name, key);
    }
  }
  optim::OptimizerPtr opt = optim::make_optimizer(name, lr, o);
  opt->set_rescale_grad(rescale);
  return opt;
}

namespace {

void bind_trainer(py::module_& m) {
  py::class_<optim::Trainer>(m, "Trainer")
      .def(py::init([](py::object params, const std::string& optimizer, py::object options,
                       py::object kvstore, py::object update_on_kvstore) {
             optim::OptimizerPtr opt = to_optimizer(optimizer, options);
             kvstore::KVStorePtr store;
             if (py::isinstance<kvstore::KVStore>(kvstore)) {
               store = kvstore.cast<kvstore::KVStorePtr>();  // shared with the caller
             } else if (py::isinstance<py::str>(kvstore)) {
               if (kvstore.cast<std::string>() != "device") {
                 store = kvstore::create(kvstore.cast<std::string>());
               }
             } else if (!kvstore.is_none()) {
               JANUS_THROW(TypeError, "Trainer: kvstore must be a name or an mx.kv store, got {}",
                           py::repr(kvstore).cast<std::string>());
             }
             const bool on_store = !update_on_kvstore.is_none() && update_on_kvstore.cast<bool>();
             return std::make_unique<optim::Trainer>(to_param_dict(params), opt, store, on_store);
           }),
           py::arg("params"), py::arg("optimizer") = "sgd",
           py::arg("optimizer_params") = py::none(), py::arg("kvstore") = "device",
           py::arg("update_on_kvstore") = py::none())
      .def(
          "step", [](optim::Trainer& t, int64_t batch_size, bool) { t.step(batch_size); },
          py::arg("batch_size"), py::arg("ignore_stale_grad") = false, ReleaseGil())
      .def("allreduce_grads", &optim::Trainer::allreduce_grads, ReleaseGil())
      .def(
          "update", [](optim::Trainer& t, int64_t batch_size, bool) { t.update(batch_size); },
          py::arg("batch_size"), py::arg("ignore_stale_grad") = false, ReleaseGil())
      .def_property_readonly("learning_rate", &optim::Trainer::learning_rate)
      .def("set_learning_rate", &optim::Trainer::set_learning_rate)
      .def("save_states", &optim::Trainer::save_states, ReleaseGil())
      .def("load_states", &optim::Trainer::load_states, ReleaseGil());
}

// One epoch of a DataLoader, as a Python iterator.
struct Epoch {
  data::DataLoader::Iterator it;
};

void bind_data(py::module_& m) {
  py::class_<data::Dataset, std::shared_ptr<data::Dataset>>(m, "Dataset")
      .def("__len__", &data::Dataset::size)
      .def("__getitem__", [](const data::Dataset& d, int64_t i) {
        data::Sample s = d.get(i);
        return py::tuple(py::cast(s));
      });
  py::class_<data::ArrayDataset, data::Dataset, std::shared_ptr<data::ArrayDataset>>(m,
                                                                                     "ArrayDataset")
      .def(py::init([](const py::args& arrays) {
        return std::make_shared<data::ArrayDataset>(arrays.cast<std::vector<NDArray>>());
      }));
  py::class_<data::FashionMNIST, data::ArrayDataset, std::shared_ptr<data::FashionMNIST>>(
      m, "FashionMNIST")
      .def(py::init([](py::object root, bool train) {
             const std::string r =
                 root.is_none() ? std::string(data::kFashionMNISTRoot) : root.cast<std::string>();
             ReleaseGilInterruptibly release;
             return std::make_shared<data::FashionMNIST>(r, train);
           }),
           py::arg("root") = py::none(), py::arg("train") = true)
      .def_static("text_labels", [] {
        std::vector<std::string> out;
        for (auto s : data::FashionMNIST::text_labels()) out.emplace_back(s);
        return out;
      });
  py::class_<Epoch>(m, "_Epoch")
      .def("__iter__", [](Epoch& e) -> Epoch& { return e; })
      .def("__next__", [](Epoch& e) -> py::object {
        if (e.it == std::default_sentinel) throw py::stop_iteration();
        data::Batch b = *e.it;
        {
          ReleaseGilInterruptibly release;
          ++e.it;
        }
        if (b.arrays.size() == 1) return py::cast(b.arrays[0]);
        return py::tuple(py::cast(b.arrays));
      });
  py::class_<data::DataLoader>(m, "DataLoader")
      .def(py::init([](std::shared_ptr<data::Dataset> ds, int64_t batch_size, bool shuffle,
                       const std::string& last_batch, int num_workers, uint64_t seed,
                       const py::kwargs&) {
             data::LastBatch lb = last_batch == "keep"       ? data::LastBatch::kKeep
                                  : last_batch == "discard"  ? data::LastBatch::kDiscard
                                  : last_batch == "rollover" ? data::LastBatch::kRollover
                                                             : data::LastBatch::kKeep;
             JANUS_CHECK(
                 last_batch == "keep" || last_batch == "discard" || last_batch == "rollover",
                 ValueError,
                 "DataLoader: last_batch '{}' is not known, expected 'keep', 'discard' "
                 "or 'rollover'",
                 last_batch);
             return std::make_unique<data::DataLoader>(
                 std::move(ds), data::DataLoaderOptions{.batch_size = batch_size,
                                                        .shuffle = shuffle,
                                                        .seed = seed,
                                                        .last_batch = lb,
                                                        .num_workers = num_workers});
           }),
           py::arg("dataset"), py::arg("batch_size") = 1, py::arg("shuffle") = false,
           py::arg("last_batch") = "keep", py::arg("num_workers") = 0, py::arg("seed") = 0)
      .def(
          "__iter__",
          [](data::DataLoader& l) {
            ReleaseGilInterruptibly release;
            return Epoch{l.begin()};
          },
          py::keep_alive<0, 1>())
      .def("__len__", &data::DataLoader::num_batches);
}

}  // namespace

void bind_gluon(py::module_& m) {
  bind_init(m);
  bind_params(m);
  bind_blocks(m);
  bind_rnn(m);
  bind_losses(m);
  bind_trainer(m);
  bind_data(m);
  m.def(
      "split_and_load",
      [](const NDArray& batch, py::object ctx, bool even_split) {
        return parallel::split_and_load(batch, to_devices(ctx), even_split);
      },
      py::arg("data"), py::arg("ctx_list"), py::arg("even_split") = true);
}

}  // namespace janus::python
