// Tests of device.h: names, parsing, existence checks and the split of cores among logical CPUs.
#include "janus/core/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "janus/base/error.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

// Sets the number of logical CPU devices for one test and restores the previous count.
class ScopedCpuDevices {
 public:
  explicit ScopedCpuDevices(int n) : saved_(num_cpu_devices()) { set_num_cpu_devices(n); }
  ~ScopedCpuDevices() { set_num_cpu_devices(saved_); }
  ScopedCpuDevices(const ScopedCpuDevices&) = delete;
  ScopedCpuDevices& operator=(const ScopedCpuDevices&) = delete;

 private:
  int saved_;
};

TEST(Device, ConstructorsAndPredicates) {
  EXPECT_EQ(cpu(), cpu(0));
  EXPECT_TRUE(cpu(3).is_cpu());
  EXPECT_FALSE(cpu(3).is_gpu());
  EXPECT_TRUE(gpu(1).is_gpu());
  EXPECT_EQ(gpu(1).id, 1);
  EXPECT_NE(cpu(0), gpu(0));
  EXPECT_NE(cpu(0), cpu(1));
  EXPECT_EQ(Device{}, cpu(0));
}

TEST(Device, ToStringAndFormat) {
  EXPECT_EQ(to_string(cpu(0)), "cpu(0)");
  EXPECT_EQ(to_string(cpu(12)), "cpu(12)");
  EXPECT_EQ(to_string(gpu(1)), "gpu(1)");
  EXPECT_EQ(fmt::format("{}", cpu(2)), "cpu(2)");
  EXPECT_EQ(fmt::format("on {}!", gpu(0)), "on gpu(0)!");
}

TEST(Device, ParseAcceptsEveryDocumentedForm) {
  EXPECT_EQ(parse_device("cpu"), cpu(0));
  EXPECT_EQ(parse_device("cpu:0"), cpu(0));
  EXPECT_EQ(parse_device("cpu:1"), cpu(1));
  EXPECT_EQ(parse_device("cpu(3)"), cpu(3));
  EXPECT_EQ(parse_device("cpu:63"), cpu(63));
  EXPECT_EQ(parse_device("gpu"), gpu(0));
  EXPECT_EQ(parse_device("gpu:0"), gpu(0));
  EXPECT_EQ(parse_device("gpu(2)"), gpu(2));
  // to_string output parses back.
  for (Device d : {cpu(0), cpu(7), gpu(0), gpu(5)}) EXPECT_EQ(parse_device(to_string(d)), d);
}

TEST(Device, ParseRejectsBadTextAndNamesIt) {
  for (const char* bad :
       {"", "tpu", "CPU", "cpu:", "cpu()", "cpu(1", "cpu1)", "cpu:x", "cpu:-1", "cpu(-2)", "cpu:1x",
        "cpu 1", " cpu", "cpu:+1", "gpu:", "cuda:0", "cpu:99999999999"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << "parse_device accepted '" << bad << "'";
    } catch (const ValueError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("device: cannot parse '{}'", bad)));
      EXPECT_THAT(e.what(), HasSubstr("expected cpu, cpu:N, cpu(N) or gpu:N"));
    }
  }
}

TEST(Device, CheckDeviceAcceptsExistingCpus) {
  EXPECT_NO_THROW(check_device(cpu(0), "test"));
  ScopedCpuDevices two(2);
  EXPECT_NO_THROW(check_device(cpu(1), "test"));
}

TEST(Device, CheckDeviceRejectsMissingCpusWithContext) {
  const int n = num_cpu_devices();
  for (int id : {n, n + 5, -1}) {
    try {
      check_device(cpu(id), "myop");
      ADD_FAILURE() << "check_device accepted cpu(" << id << ")";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("myop: device cpu({}) does not exist", id)));
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("there are {} cpu devices", n)));
      EXPECT_THAT(e.what(), HasSubstr("set_num_cpu_devices"));
    }
  }
}

TEST(Device, HardwareCoresIsPositive) {
  EXPECT_GE(hardware_cores(), 1);
  EXPECT_GE(num_cpu_devices(), 1);
  EXPECT_LE(num_cpu_devices(), kMaxDevicesPerType);
}

TEST(Device, SetNumCpuDevicesValidatesTheCount) {
  const int saved = num_cpu_devices();
  for (int bad : {0, -1, kMaxDevicesPerType + 1}) {
    try {
      set_num_cpu_devices(bad);
      ADD_FAILURE() << "set_num_cpu_devices accepted " << bad;
    } catch (const ValueError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("set_num_cpu_devices: got {}", bad)));
      EXPECT_THAT(e.what(), HasSubstr("expected a count in [1, 64]"));
    }
  }
  EXPECT_EQ(num_cpu_devices(), saved);  // a rejected count changes nothing
  {
    ScopedCpuDevices max(kMaxDevicesPerType);
    EXPECT_EQ(num_cpu_devices(), kMaxDevicesPerType);
  }
  EXPECT_EQ(num_cpu_devices(), saved);
}

TEST(Device, OneDeviceOwnsEveryCore) {
  ScopedCpuDevices one(1);
  const std::vector<int> cores = device_cores(cpu(0));
  EXPECT_EQ(static_cast<int>(cores.size()), hardware_cores());
  EXPECT_TRUE(std::is_sorted(cores.begin(), cores.end()));
  EXPECT_EQ(std::set<int>(cores.begin(), cores.end()).size(), cores.size());
}

// Every device gets at least one core; with enough cores the shares are disjoint, contiguous,
// differ in size by at most one and cover the process's cores.
void expect_split(int n_dev) {
  SCOPED_TRACE(fmt::format("{} devices on {} cores", n_dev, hardware_cores()));
  std::vector<int> process;
  {
    ScopedCpuDevices one(1);
    process = device_cores(cpu(0));
  }
  ScopedCpuDevices scoped(n_dev);
  const int n_cores = static_cast<int>(process.size());
  std::vector<int> seen;
  size_t min_size = SIZE_MAX, max_size = 0;
  for (int d = 0; d < n_dev; ++d) {
    const std::vector<int> cores = device_cores(cpu(d));
    ASSERT_FALSE(cores.empty()) << "cpu(" << d << ")";
    min_size = std::min(min_size, cores.size());
    max_size = std::max(max_size, cores.size());
    for (int c : cores) {
      EXPECT_NE(std::find(process.begin(), process.end(), c), process.end()) << c;
    }
    seen.insert(seen.end(), cores.begin(), cores.end());
  }
  EXPECT_LE(max_size - min_size, 1u);
  std::sort(seen.begin(), seen.end());
  if (n_dev <= n_cores) {
    // Disjoint and covering.
    EXPECT_EQ(seen, process);
  } else {
    EXPECT_EQ(max_size, 1u);  // more devices than cores: one shared core each
    EXPECT_EQ(std::set<int>(seen.begin(), seen.end()),
              std::set<int>(process.begin(), process.end()));
  }
}

TEST(Device, CoresSplitBetweenTwoDevices) {
  expect_split(2);
  ScopedCpuDevices two(2);
  const std::vector<int> c0 = device_cores(cpu(0));
  const std::vector<int> c1 = device_cores(cpu(1));
  if (hardware_cores() >= 2) {
    for (int c : c0) EXPECT_EQ(std::find(c1.begin(), c1.end(), c), c1.end()) << "core " << c;
    // The first device gets the lower cores.
    EXPECT_LT(c0.back(), c1.front());
  } else {
    EXPECT_EQ(c0, c1);
  }
}

TEST(Device, CoresSplitForManyDeviceCounts) {
  const int saved = num_cpu_devices();
  for (int n : {1, 2, 3, 4, 7, 16, kMaxDevicesPerType}) expect_split(n);
  EXPECT_EQ(num_cpu_devices(), saved);  // restored
}

}  // namespace
}  // namespace janus
