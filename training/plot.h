// An SVG chart of a training run: the loss per epoch (left axis) and the train and test
// accuracy (right axis, 0 to 1). `janus train --log-json FILE` writes it beside the log, with
// the extension .svg. Part of training/ (below tools/ and bench/).
#pragma once

#include <string>
#include <vector>

#include "train.h"

namespace janus::training {

/// The chart as a standalone SVG document; `title` is printed above it.
std::string training_plot_svg(const std::vector<EpochResult>& epochs, const std::string& title);

/// Where the chart of a JSON log goes: the log's path with the extension .svg.
std::string plot_path_for(const std::string& log_json);

}  // namespace janus::training
