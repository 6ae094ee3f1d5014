// SyncBatchNorm on 2 and 4 logical CPU devices: a training step (forward and backward per
// device, as Gluon code runs it) gives BatchNorm's outputs, running statistics and gradients on
// the whole batch; one device is BatchNorm; misuse fails with a clear error and never hangs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

// Runs `f` on another thread and fails (instead of hanging the suite) if it takes over a
// minute: every call here must return or throw.
template <typename F>
void within_a_minute(F f) {
  auto done = std::async(std::launch::async, std::move(f));
  ASSERT_EQ(done.wait_for(std::chrono::minutes(1)), std::future_status::ready) << "it hung";
  done.get();
}

// Logical CPU devices for one test, restored after it.
class Devices {
 public:
  explicit Devices(int n) : saved_(num_cpu_devices()) { set_num_cpu_devices(std::max(saved_, n)); }
  ~Devices() {
    wait_all();
    set_num_cpu_devices(saved_);
  }

 private:
  int saved_;
};

std::vector<Device> first_devices(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(cpu(i));
  return out;
}

struct StepResult {
  std::vector<float> y, dx, dgamma, dbeta, running_mean, running_var;
};

// Gamma and beta away from their defaults, so that their gradients and use are tested.
void set_affine(BatchNorm& bn) {
  bn.gamma()->set_data(from_vector<float>({0.5F, 2.0F, -1.0F}, {3}));
  bn.beta()->set_data(from_vector<float>({0.1F, -0.3F, 1.0F}, {3}));
}

// Two training steps of BatchNorm on the whole batch on cpu(0): loss sum(y * w).
StepResult batch_norm_steps(const NDArray& x0, const NDArray& x, const NDArray& w) {
  BatchNorm bn(1, 0.9, 1e-5, true, true, 3);
  bn.initialize();
  set_affine(bn);
  {
    autograd::RecordScope record;
    bn(x0);  // the first step: only its running statistics matter
  }
  autograd::attach_grad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = bn(x);
    autograd::backward(sum(y * w));
  }
  return {to_vector<float>(y),
          to_vector<float>(autograd::grad(x)),
          to_vector<float>(bn.gamma()->grad()),
          to_vector<float>(bn.beta()->grad()),
          to_vector<float>(bn.running_mean()->data()),
          to_vector<float>(bn.running_var()->data())};
}

std::vector<NDArray> slices(const NDArray& a, int n) {
  std::vector<NDArray> out;
  const int64_t rows = a.shape()[0] / n;
  for (int k = 0; k < n; ++k) out.push_back(copyto(a.slice(k * rows, (k + 1) * rows), cpu(k)));
  return out;
}

std::vector<float> concat_rows(const std::vector<NDArray>& parts) {
  std::vector<float> out;
  for (const NDArray& p : parts) {
    const std::vector<float> v = to_vector<float>(p);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Tolerance: the statistics and the gradient sums are in double either way, but the devices'
// partial sums are combined in another order than one kernel's two passes (a relative
// difference near 1e-16), which can move a float32 result by one rounding (6e-8 relative); the
// gamma and beta gradients are n float32 shares added in float32 (n - 1 more roundings).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << what << " [" << i << "]";
  }
}

class SyncBatchNormOnDevices : public ::testing::TestWithParam<int> {};

TEST_P(SyncBatchNormOnDevices, ATrainingStepEqualsBatchNormOnTheWholeBatch) {
  const int n = GetParam();
  Devices devices(n);
  seed(5);
  const NDArray x0 = random_normal(1, 2, {8, 3, 2, 2});
  const NDArray x = random_normal(-1, 3, {8, 3, 2, 2});
  const NDArray w = random_normal(0, 1, {8, 3, 2, 2});
  const StepResult want = batch_norm_steps(x0, x, w);

  SyncBatchNorm sync(3);
  sync.initialize(Zero(), first_devices(n));  // the running statistics keep their own 0 and 1
  set_affine(sync);
  {
    autograd::RecordScope record;
    for (const NDArray& xk : slices(x0, n)) sync(xk);
  }
  const std::vector<NDArray> xs = slices(x, n);
  const std::vector<NDArray> ws = slices(w, n);
  std::vector<NDArray> ys;
  std::vector<NDArray> losses;
  within_a_minute([&] {
    for (const NDArray& xk : xs) autograd::attach_grad(xk);
    autograd::RecordScope record;
    for (int k = 0; k < n; ++k) {
      ys.push_back(sync(xs[k]));
      losses.push_back(sum(ys.back() * ws[k]));
    }
    for (const NDArray& l : losses) autograd::backward(l);  // one device after the other
  });
  std::vector<NDArray> dxs;
  for (const NDArray& xk : xs) dxs.push_back(autograd::grad(xk));
  expect_close(concat_rows(ys), want.y, "y");
  expect_close(concat_rows(dxs), want.dx, "dx");
  // Each replica's gamma and beta gradients are its slice's share: their sum is the whole
  // batch's (what the Trainer's allreduce computes).
  NDArray dgamma = zeros({3});
  NDArray dbeta = zeros({3});
  for (int k = 0; k < n; ++k) {
    dgamma = dgamma + copyto(sync.gamma()->grad(cpu(k)), cpu(0));
    dbeta = dbeta + copyto(sync.beta()->grad(cpu(k)), cpu(0));
  }
  expect_close(to_vector<float>(dgamma), want.dgamma, "dgamma");
  expect_close(to_vector<float>(dbeta), want.dbeta, "dbeta");
  // Every replica's running statistics: the whole batch's, and bitwise the same everywhere.
  const std::vector<float> mean0 = to_vector<float>(sync.running_mean()->data(cpu(0)));
  const std::vector<float> var0 = to_vector<float>(sync.running_var()->data(cpu(0)));
  expect_close(mean0, want.running_mean, "running_mean");
  expect_close(var0, want.running_var, "running_var");
  for (int k = 1; k < n; ++k) {
    EXPECT_EQ(to_vector<float>(sync.running_mean()->data(cpu(k))), mean0) << k;
    EXPECT_EQ(to_vector<float>(sync.running_var()->data(cpu(k))), var0) << k;
  }
}

// Gluon code may also run forward and backward device by device: device 0's backward is pushed
// before device 1's forward call, and waits for it.
TEST_P(SyncBatchNormOnDevices, ForwardAndBackwardMayAlternateByDevice) {
  const int n = GetParam();
  Devices devices(n);
  seed(6);
  const NDArray x = random_normal(0, 1, {8, 3, 5});
  const NDArray w = random_normal(0, 1, {8, 3, 5});
  SyncBatchNorm sync(3);
  sync.initialize(Zero(), first_devices(n));
  set_affine(sync);
  BatchNorm bn(1, 0.9, 1e-5, true, true, 3);
  bn.initialize();
  set_affine(bn);
  autograd::attach_grad(x);
  const std::vector<NDArray> xs = slices(x, n);
  const std::vector<NDArray> ws = slices(w, n);
  std::vector<NDArray> dxs;
  within_a_minute([&] {
    for (int k = 0; k < n; ++k) {
      autograd::attach_grad(xs[k]);
      autograd::RecordScope record;
      autograd::backward(sum(sync(xs[k]) * ws[k]));
    }
    for (const NDArray& xk : xs) dxs.push_back(autograd::grad(xk));
    autograd::RecordScope record;
    autograd::backward(sum(bn(x) * w));
  });
  expect_close(concat_rows(dxs), to_vector<float>(autograd::grad(x)), "dx");
}

INSTANTIATE_TEST_SUITE_P(Devices, SyncBatchNormOnDevices, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "devices"; });

TEST(SyncBatchNorm, OneDeviceIsBatchNorm) {
  SyncBatchNorm sync(3);
  BatchNorm bn(1, 0.9, 1e-5, true, true, 3);
  sync.initialize();
  bn.initialize();
  seed(7);
  const NDArray x = random_normal(0, 1, {4, 3, 2});
  {
    autograd::RecordScope record;  // training: batch statistics
    EXPECT_EQ(to_vector<float>(sync(x)), to_vector<float>(bn(x)));
  }
  EXPECT_EQ(to_vector<float>(sync.running_var()->data()),
            to_vector<float>(bn.running_var()->data()));
  EXPECT_EQ(to_vector<float>(sync(x)), to_vector<float>(bn(x)));  // inference
}

TEST(SyncBatchNorm, NumDevicesMustMatchTheReplicas) {
  EXPECT_THAT(error_of<ValueError>([] { SyncBatchNorm(0, -1); }),
              HasSubstr("SyncBatchNorm: num_devices is -1, expected a positive number"));
  Devices devices(2);
  SyncBatchNorm sync(3, /*num_devices=*/3);
  sync.initialize(Zero(), first_devices(2));
  autograd::RecordScope record;
  EXPECT_THAT(error_of<ValueError>([&] {
                sync(zeros({2, 3, 2}));
              }),
              HasSubstr("num_devices is 3 but its parameters have replicas on 2 device(s) "
                        "(cpu(0), cpu(1)); expected num_devices=2 or 0"));
  SyncBatchNorm one(3, /*num_devices=*/2);
  one.initialize();
  EXPECT_THAT(error_of<ValueError>([&] {
                one(zeros({2, 3, 2}));
              }),
              HasSubstr("num_devices is 2 but its parameters have replicas on 1 device(s)"));
}

TEST(SyncBatchNorm, ADeviceCallingTwiceInAStepIsAnError) {
  Devices devices(2);
  SyncBatchNorm sync(3);
  sync.initialize(Zero(), first_devices(2));
  const NDArray x0 = random_normal(0, 1, {2, 3, 2});
  const NDArray x1 = copyto(x0, cpu(1));
  within_a_minute([&] {
    autograd::RecordScope record;
    sync(x0);
    EXPECT_THAT(error_of<ValueError>([&] { sync(x0); }),
                HasSubstr("cpu(0) called twice in one step (called: [cpu(0)], not yet: "
                          "[cpu(1)])"));
    const NDArray y1 = sync(x1);  // the step completes
    wait_to_read(y1);
  });
}

TEST(SyncBatchNorm, WaitingOnAnOutputBeforeEveryDeviceCalledFailsInsteadOfHanging) {
  Devices devices(2);
  SyncBatchNorm sync(3);
  sync.initialize(Zero(), first_devices(2));
  const NDArray x0 = random_normal(0, 1, {2, 3, 2});
  const NDArray x1 = copyto(x0, cpu(1));
  within_a_minute([&] {
    autograd::RecordScope record;
    const NDArray y0 = sync(x0);
    const NDArray z0 = relu(y0);  // downstream of the held output
    const std::string message = error_of<EngineError>([&] { wait_to_read(z0); });
    EXPECT_THAT(message, HasSubstr("the forward of a step was abandoned before every one of its "
                                   "2 devices had called (called: [cpu(0)], not yet: [cpu(1)])"));
    EXPECT_THAT(message, HasSubstr("abandoned by a wait on an array"));
    EXPECT_THROW(wait_to_read(y0), EngineError);
    // The abandoned step left the running statistics alone (still 1), and the layer starts a
    // new step afterwards.
    EXPECT_EQ(to_vector<float>(sync.running_var()->data(cpu(0))), std::vector<float>(3, 1.0F));
    const NDArray a = sync(x0);
    const NDArray b = sync(x1);
    EXPECT_EQ(to_vector<float>(a), to_vector<float>(copyto(b, cpu(0))));
  });
}

TEST(SyncBatchNorm, BackwardOnEveryDeviceButOneFailsAtTheNextWait) {
  Devices devices(2);
  SyncBatchNorm sync(3);
  sync.initialize(Zero(), first_devices(2));
  const NDArray x0 = random_normal(0, 1, {2, 3, 2});
  const NDArray x1 = copyto(x0, cpu(1));
  autograd::attach_grad(x0);
  within_a_minute([&] {
    NDArray l0;
    {
      autograd::RecordScope record;
      l0 = sum(sync(x0));
      sum(sync(x1));
    }
    autograd::backward(l0, /*retain_graph=*/true);
    EXPECT_THAT(error_of<ValueError>([&] { autograd::backward(l0); }),
                HasSubstr("backward reached its call on cpu(0) twice in one step"));
    EXPECT_THAT(error_of<EngineError>([&] { wait_to_read(autograd::grad(x0)); }),
                HasSubstr("the backward of a step was abandoned"));
  });
}

TEST(SyncBatchNorm, TheNaiveEngineAndHybridizedTrainingAcrossDevicesAreRefused) {
  Devices devices(2);
  auto net = std::make_shared<Sequential>();
  auto sync = std::make_shared<SyncBatchNorm>(3);
  net->add(sync);
  net->initialize(Zero(), first_devices(2));
  const NDArray x0 = random_normal(0, 1, {2, 3, 2});
  set_engine(EngineKind::kNaive);
  {
    autograd::RecordScope record;
    EXPECT_THAT(error_of<NotImplementedError>([&] { (*sync)(x0); }),
                HasSubstr("training across 2 devices needs the threaded engine"));
  }
  set_engine(EngineKind::kThreaded);
  net->hybridize();
  autograd::RecordScope record;
  EXPECT_THAT(error_of<NotImplementedError>([&] { (*net)(x0); }),
              HasSubstr("training across 2 devices does not hybridize"));
}

}  // namespace
}  // namespace janus::nn
