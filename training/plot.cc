// The training chart (plot.h): plain SVG, one polyline per series, ticks on both axes.
#include "plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace janus::training {
namespace {

constexpr double kWidth = 640, kHeight = 380;
constexpr double kLeft = 64, kRight = 64, kTop = 40, kBottom = 56;

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A "nice" upper bound for the loss axis: 1, 2 or 5 times a power of ten, at least `v`.
double nice_ceiling(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10.0 * p;
}

}  // namespace

std::string training_plot_svg(const std::vector<EpochResult>& epochs, const std::string& title) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const int n = static_cast<int>(epochs.size());
  double max_loss = 0;
  for (const EpochResult& e : epochs) max_loss = std::max(max_loss, e.loss);
  const double loss_top = nice_ceiling(max_loss);
  // Epoch 1 at the left edge, the last at the right (one epoch: in the middle).
  auto x_of = [&](int i) { return kLeft + (n > 1 ? plot_w * i / (n - 1) : plot_w / 2); };
  auto y_loss = [&](double v) {
    return kTop + plot_h * (1.0 - std::clamp(v / loss_top, 0.0, 1.0));
  };
  auto y_acc = [&](double v) { return kTop + plot_h * (1.0 - std::clamp(v, 0.0, 1.0)); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{3}</text>\n",
      kWidth, kHeight, kWidth / 2, escape(title));
  // Frame, horizontal grid and the ticks of both axes.
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      kLeft, kTop, plot_w, plot_h);
  for (int t = 0; t <= 5; ++t) {
    const double f = t / 5.0, y = kTop + plot_h * (1.0 - f);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n",
                       kLeft, y, kLeft + plot_w, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", kLeft - 6,
                       y + 4, loss_top * f);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{:.1f}</text>\n", kLeft + plot_w + 6, y + 4, f);
  }
  for (int i = 0; i < n; ++i) {
    if (n > 12 && i % ((n + 11) / 12) != 0 && i != n - 1) continue;  // at most ~12 labels
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       kTop + plot_h + 18, epochs[static_cast<size_t>(i)].epoch);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">epoch</text>\n",
                     kLeft + plot_w / 2, kHeight - 14);
  svg += fmt::format(
      "<text x=\"16\" y=\"{0}\" transform=\"rotate(-90 16 {0})\" "
      "text-anchor=\"middle\">loss</text>\n",
      kTop + plot_h / 2);
  svg += fmt::format(
      "<text x=\"{0}\" y=\"{1}\" transform=\"rotate(90 {0} {1})\" "
      "text-anchor=\"middle\">accuracy</text>\n",
      kWidth - 14, kTop + plot_h / 2);

  struct Series {
    const char* name;
    const char* color;
    double EpochResult::*field;
    bool is_loss;
  };
  const Series series[] = {{"loss", "#d62728", &EpochResult::loss, true},
                           {"train acc", "#1f77b4", &EpochResult::train_acc, false},
                           {"test acc", "#2ca02c", &EpochResult::test_acc, false}};
  int row = 0;
  for (const Series& s : series) {
    std::string points;
    std::string marks;
    for (int i = 0; i < n; ++i) {
      const double v = epochs[static_cast<size_t>(i)].*s.field;
      const double y = s.is_loss ? y_loss(v) : y_acc(v);
      points += fmt::format("{}{:.1f},{:.1f}", i == 0 ? "" : " ", x_of(i), y);
      marks += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x_of(i),
                           y, s.color);
    }
    svg += fmt::format(
        "<polyline class=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "points=\"{}\"/>\n",
        s.name, s.color, points);
    svg += marks;
    // Legend, bottom right inside the plot.
    const double ly = kTop + plot_h - 50 + 16 * row++;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/><text x=\"{4}\" y=\"{5}\">{6}</text>\n",
        kLeft + plot_w - 110, ly, kLeft + plot_w - 90, s.color, kLeft + plot_w - 84, ly + 4,
        s.name);
  }
  svg += "</svg>\n";
  return svg;
}

std::string plot_path_for(const std::string& log_json) {
  return std::filesystem::path(log_json).replace_extension(".svg").string();
}

}  // namespace janus::training
