// The MXNet 1.9.1 fixtures (tests/fixtures/mxnet/, made by make_fixtures.sh): paths, and the
// comparison of Janus's outputs with MXNet's. Not part of the library.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "janus/engine/array.h"
#include "janus/graph/npy.h"

namespace janus::testing {

/// legacy: MXNet's default front end; numpy: npx.set_np() (numpy operators, NDArray V3).
inline const char* const kMxnetFlavours[] = {"legacy", "numpy"};
/// Exported in both flavours, one output each; also pools ("full" pooling, four outputs, both
/// flavours), symops (the Module-era operators, three outputs, legacy only), orderops, normops,
/// shapeops and arrayops (the newer operators, one output per case, legacy only) and npops and
/// nparrayops (their numpy-mode names, numpy only).
inline const char* const kMxnetModels[] = {"mlp", "lenet", "blocks"};

/// tests/fixtures/mxnet/FLAVOUR/MODEL (a prefix: -symbol.json, -0000.params, -input.npy,
/// -output<k>.npy).
inline std::string mxnet_fixture(const std::string& flavour, const std::string& model) {
  return std::string(JANUS_MXNET_FIXTURES) + "/" + flavour + "/" + model;
}

/// Every element of `actual` within 1e-5 of MXNet's, relative (|a - e| <= 1e-5 * |e|), with an
/// absolute floor of 1e-7 for elements that are (nearly) zero.
inline void expect_matches_mxnet(const NDArray& actual, const std::string& expected_npy) {
  const NDArray expected = graph::load_npy(expected_npy);
  ASSERT_EQ(actual.shape(), expected.shape()) << expected_npy;
  const std::vector<float> a = to_vector<float>(actual);
  const std::vector<float> e = to_vector<float>(expected);
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double tol = std::max(1e-5 * std::abs(double(e[i])), 1e-7);
    if (!(std::abs(double(a[i]) - double(e[i])) <= tol) && ++bad <= 5) {
      ADD_FAILURE() << expected_npy << ": element " << i << " is " << a[i] << ", MXNet gives "
                    << e[i];
    }
  }
  EXPECT_EQ(bad, 0) << expected_npy;
}

}  // namespace janus::testing
