// Checkpoints of `janus train`: parameters, trainer state and the epochs done, written so that a
// process killed at any moment leaves the last complete checkpoint intact. Part of training/.
//
//   DIR/epoch-0002/            a complete checkpoint (it only ever appears complete: renamed)
//         params.safetensors     nn::save_parameters
//         trainer.safetensors    Trainer::save_states (optimizer state, update count, lr)
//         checkpoint.json        format, epoch, the run's options, the figures of every epoch
//   DIR/.epoch-0003.tmp-PID/   one being written, or left by a writer that died: ignored
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "train.h"

namespace janus {
namespace nn {
class Block;
}
namespace optim {
class Trainer;
}
}  // namespace janus

namespace janus::training {

/// What a checkpoint holds besides the arrays.
struct CheckpointInfo {
  std::filesystem::path path;  // DIR/epoch-NNNN
  int epoch = 0;               // epochs done
  std::vector<EpochResult> results;
};

/// Writes the checkpoint of `epoch` into `dir` (created if need be): every file into a
/// temporary directory, each fsynced, then the directory renamed to epoch-NNNN and `dir`
/// fsynced. Removes temporary directories that earlier writers left. Blocks until the arrays
/// are computed. Test hook: with JANUS_CHECKPOINT_TEST_CRASH=N in the environment, the writer
/// of epoch N calls _exit(75) after writing the files and before the rename, as a process
/// killed in the middle of a write would stop.
void write_checkpoint(const std::filesystem::path& dir, int epoch, const TrainOptions& options,
                      const std::vector<EpochResult>& results, const nn::Block& net,
                      const optim::Trainer& trainer);

/// The complete checkpoint of the highest epoch in `dir`, if any (none when `dir` is absent).
std::optional<CheckpointInfo> latest_checkpoint(const std::filesystem::path& dir);

/// Loads `checkpoint` into `net` and `trainer` (before the trainer's first step). A checkpoint
/// of another run (model, optimizer, batch size, learning rate, schedule, seed, samples) is a
/// ValueError naming the option and both values; a damaged one a FormatError naming the file.
void load_checkpoint(const CheckpointInfo& checkpoint, const TrainOptions& options, nn::Block& net,
                     optim::Trainer& trainer);

}  // namespace janus::training
