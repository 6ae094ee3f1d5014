// seed_hybrid_net: the seed's HybridNet (d2l.ai 12.1, "Hybrid Programming", In [9]-[12]): a
// block with print statements in its forward, a Dense(4) with ReLU and a Dense(2), called on a
// 1x3 input imperatively, then hybridized twice. As in the seed, the forward prints what module
// it runs in and its values; while tracing, the values are symbolic placeholders (printing one
// would raise a TraceError, so their shapes are printed). The effect holds when the second
// hybridized call prints nothing (the forward no longer runs) and all three outputs are equal.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "janus/graph/trace.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using janus::NDArray;
namespace nn = janus::nn;

std::string show(const NDArray& x) {
  if (x.is_placeholder()) return "<placeholder " + x.shape().to_string() + ">";
  std::ostringstream s;
  s << x;
  return s.str();
}

class HybridNet : public nn::Block {
 public:
  HybridNet() : Block("hybridnet") {
    hidden_ = register_child(std::make_shared<nn::Dense>(4), "hidden");
    output_ = register_child(std::make_shared<nn::Dense>(2), "output");
  }
  NDArray forward(const NDArray& x) override {
    ++lines;
    std::printf("module F:  %s\n", janus::graph::is_tracing() ? "janus::graph (tracing a graph)"
                                                              : "janus (imperative)");
    std::printf("value  x:  %s\n", show(x).c_str());
    const NDArray h = janus::relu((*hidden_)(x));
    std::printf("result  :  %s\n", show(h).c_str());
    return (*output_)(h);
  }
  int lines = 0;

 private:
  std::shared_ptr<nn::Dense> hidden_, output_;
};

int run(const bench::Options& options) {
  janus::seed(0);
  auto net = std::make_shared<HybridNet>();
  net->initialize();
  const NDArray x = janus::random_normal(0, 1, {1, 3});
  std::printf("net(x), imperative:\n");
  const NDArray out = (*net)(x);
  const std::vector<float> a = janus::to_vector<float>(out);
  std::printf("-> %s\n\nnet.hybridize(); net(x):\n", show(out).c_str());
  const int before = net->lines;
  net->hybridize();
  const std::vector<float> b = janus::to_vector<float>((*net)(x));
  const int traced = net->lines - before;
  std::printf("-> [%g, %g]\n\nnet(x) again:\n", b[0], b[1]);
  const std::vector<float> c = janus::to_vector<float>((*net)(x));
  const int again = net->lines - before - traced;
  std::printf("-> [%g, %g]\n", c[0], c[1]);
  const bool holds = traced == 1 && again == 0 && a == b && b == c;
  std::printf(
      "\neffect (the forward's prints appear while tracing only; same outputs): %s "
      "(forward ran %d time(s) on the first hybridized call, %d on the second)\n",
      holds ? "HOLDS" : "does NOT hold", traced, again);
  bench::print_json_line("seed_hybrid_net", {{"traced_runs", static_cast<double>(traced)},
                                             {"later_runs", static_cast<double>(again)},
                                             {"holds", holds ? 1.0 : 0.0}});
  return 0;
}

const bench::Registration reg{
    "seed_hybrid_net", "seed 12.1: a hybridized forward runs (and prints) only when traced", run};

}  // namespace
