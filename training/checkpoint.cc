// Checkpoints of `janus train`: an atomic directory per checkpoint (temporary name, fsync,
// rename), found again by scanning for the highest complete epoch.
#include "checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"
#include "janus/nn/block.h"
#include "janus/nn/serialization.h"
#include "janus/optim/trainer.h"

namespace janus::training {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormat = 1;
constexpr std::string_view kPrefix = "epoch-";
constexpr const char* kParams = "params.safetensors";
constexpr const char* kTrainer = "trainer.safetensors";
constexpr const char* kInfo = "checkpoint.json";

// The options that decide the loss curve: a resumed run must have the same.
json curve_options(const TrainOptions& o) {
  return {{"model", o.model},
          {"optimizer", o.optimizer},
          {"batch_size", o.batch_size},
          {"lr", o.lr},
          {"lr_schedule", o.lr_schedule},
          {"momentum", o.momentum},
          {"wd", o.wd},
          {"seed", o.seed},
          {"limit", o.limit}};
}

// Flushes `path` (a file or a directory) to the disk.
void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  JANUS_CHECK(fd >= 0, IOError, "checkpoint: cannot open '{}' to sync it: {}", path.string(),
              std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  JANUS_CHECK(rc == 0, IOError, "checkpoint: fsync of '{}' failed: {}", path.string(),
              std::strerror(saved));
}

// The epoch of a checkpoint directory's name "epoch-NNNN", or -1.
int epoch_of(const std::string& name) {
  if (!name.starts_with(kPrefix)) return -1;
  const std::string_view digits = std::string_view(name).substr(kPrefix.size());
  int epoch = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
  return ec == std::errc() && end == digits.data() + digits.size() ? epoch : -1;
}

json results_json(const std::vector<EpochResult>& rs) {
  json out = json::array();
  for (const EpochResult& r : rs) {
    out.push_back({{"epoch", r.epoch},
                   {"loss", r.loss},
                   {"train_acc", r.train_acc},
                   {"test_acc", r.test_acc},
                   {"seconds", r.seconds},
                   {"samples_per_s", r.samples_per_s}});
  }
  return out;
}

json read_info(const fs::path& file) {
  std::ifstream f(file);
  JANUS_CHECK(f.good(), IOError, "checkpoint: cannot read '{}'", file.string());
  try {
    json j = json::parse(f);
    JANUS_CHECK(j.value("format", 0) == kFormat, FormatError,
                "checkpoint: '{}' has format {}, expected {}", file.string(), j.value("format", 0),
                kFormat);
    return j;
  } catch (const json::exception& e) {
    JANUS_THROW(FormatError, "checkpoint: '{}' is not a valid checkpoint description: {}",
                file.string(), e.what());
  }
}

}  // namespace

void write_checkpoint(const fs::path& dir, int epoch, const TrainOptions& options,
                      const std::vector<EpochResult>& results, const nn::Block& net,
                      const optim::Trainer& trainer) {
  fs::create_directories(dir);
  // Leftovers of writers that died: they were never renamed, so nothing refers to them.
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".epoch-")) fs::remove_all(e.path());
  }
  const std::string name = fmt::format("{}{:04d}", kPrefix, epoch);
  const fs::path final_path = dir / name;
  JANUS_CHECK(!fs::exists(final_path), IOError,
              "checkpoint: '{}' exists already (a checkpoint of another run?)",
              final_path.string());
  const fs::path tmp = dir / fmt::format(".{}.tmp-{}", name, ::getpid());
  fs::create_directory(tmp);
  nn::save_parameters(net, (tmp / kParams).string());
  trainer.save_states((tmp / kTrainer).string());
  {
    const json info = {{"format", kFormat},
                       {"epoch", epoch},
                       {"options", curve_options(options)},
                       {"results", results_json(results)}};
    std::ofstream f(tmp / kInfo);
    f << info.dump(2) << "\n";
    f.close();
    JANUS_CHECK(f.good(), IOError, "checkpoint: writing '{}' failed", (tmp / kInfo).string());
  }
  for (const char* file : {kParams, kTrainer, kInfo}) sync_path(tmp / file);
  sync_path(tmp);
  if (const char* crash = std::getenv("JANUS_CHECKPOINT_TEST_CRASH");
      crash != nullptr && std::atoi(crash) == epoch) {
    ::_exit(75);  // the test of a write cut short: the files exist, the rename never happens
  }
  fs::rename(tmp, final_path);
  sync_path(dir);
}

std::optional<CheckpointInfo> latest_checkpoint(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  int best = -1;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const int epoch = epoch_of(e.path().filename().string());
    if (epoch > best && fs::exists(e.path() / kInfo)) best = epoch;
  }
  if (best < 0) return std::nullopt;
  CheckpointInfo c;
  c.path = dir / fmt::format("{}{:04d}", kPrefix, best);
  const json info = read_info(c.path / kInfo);
  try {
    c.epoch = info.at("epoch").get<int>();
    for (const json& r : info.at("results")) {
      c.results.push_back({.epoch = r.at("epoch").get<int>(),
                           .loss = r.at("loss").get<double>(),
                           .train_acc = r.at("train_acc").get<double>(),
                           .test_acc = r.at("test_acc").get<double>(),
                           .seconds = r.at("seconds").get<double>(),
                           .samples_per_s = r.at("samples_per_s").get<double>()});
    }
  } catch (const json::exception& e) {
    JANUS_THROW(FormatError, "checkpoint: '{}': {}", (c.path / kInfo).string(), e.what());
  }
  JANUS_CHECK(c.epoch == best, FormatError, "checkpoint: '{}' says epoch {}, expected {}",
              (c.path / kInfo).string(), c.epoch, best);
  return c;
}

void load_checkpoint(const CheckpointInfo& c, const TrainOptions& options, nn::Block& net,
                     optim::Trainer& trainer) {
  const json saved = read_info(c.path / kInfo).value("options", json::object());
  const json now = curve_options(options);
  for (const auto& [key, value] : now.items()) {
    const json was = saved.value(key, json());
    JANUS_CHECK(was == value, ValueError,
                "--resume: the checkpoint {} was written by a run with {} {}, but this run has "
                "{} {}; resume with the same options, or start afresh in another "
                "--checkpoint-dir",
                c.path.string(), key, was.dump(), key, value.dump());
  }
  nn::load_parameters(net, (c.path / kParams).string());
  trainer.load_states((c.path / kTrainer).string());
}

}  // namespace janus::training
