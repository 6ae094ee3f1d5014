// Conformance specifications of the shape operators.
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC({.op = "reshape",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     RefTensor out = in[0];
                     out.shape = resolve_reshape(in[0].shape, attrs.get<Shape>(0));
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{2, 3}}, {Shape{3, 2}}},
                           {{{2, 3, 4}}, {Shape{-1, 4}}},
                           {{{6}}, {Shape{1, 6, 1}}},
                           {{{}}, {Shape{1}}},
                           {{{0, 4}}, {Shape{2, 0}}}}});

}  // namespace
}  // namespace janus::testing
