// The attribute structs of the optimizer update operators: one per attribute list, each field
// named after the registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>

#include "../typed_attrs.h"

namespace janus::ops {

struct SgdAttrs {
  double lr = 0.0;
  double wd = 0.0;
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;
  static constexpr auto fields() {
    return std::tuple{field("lr", &SgdAttrs::lr), field("wd", &SgdAttrs::wd),
                      field("rescale_grad", &SgdAttrs::rescale_grad),
                      field("clip_gradient", &SgdAttrs::clip_gradient)};
  }
  static SgdAttrs from(const Attrs& attrs) { return read_attrs<SgdAttrs>(attrs); }
};

struct SgdMomAttrs {
  double lr = 0.0;
  double momentum = 0.0;
  double wd = 0.0;
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;
  static constexpr auto fields() {
    return std::tuple{field("lr", &SgdMomAttrs::lr), field("momentum", &SgdMomAttrs::momentum),
                      field("wd", &SgdMomAttrs::wd),
                      field("rescale_grad", &SgdMomAttrs::rescale_grad),
                      field("clip_gradient", &SgdMomAttrs::clip_gradient)};
  }
  static SgdMomAttrs from(const Attrs& attrs) { return read_attrs<SgdMomAttrs>(attrs); }
};

struct AdamAttrs {
  double lr = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double wd = 0.0;
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;
  int64_t t = 1;  // the step number for the bias correction; 0: none
  static constexpr auto fields() {
    return std::tuple{field("lr", &AdamAttrs::lr),
                      field("beta1", &AdamAttrs::beta1),
                      field("beta2", &AdamAttrs::beta2),
                      field("epsilon", &AdamAttrs::epsilon),
                      field("wd", &AdamAttrs::wd),
                      field("rescale_grad", &AdamAttrs::rescale_grad),
                      field("clip_gradient", &AdamAttrs::clip_gradient),
                      field("t", &AdamAttrs::t)};
  }
  static AdamAttrs from(const Attrs& attrs) { return read_attrs<AdamAttrs>(attrs); }
};

}  // namespace janus::ops
