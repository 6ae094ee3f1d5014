// Random operation graphs over a pool of vars, on several devices and lanes, at 1, 2, 4 and 8
// workers: final values must equal the naive engine's, whatever the scheduling.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "janus/engine/engine.h"

namespace janus {
namespace {

struct RandomOp {
  std::vector<int> reads;
  std::vector<int> writes;
  int device;
  Lane lane;
  int priority;
};

std::vector<RandomOp> make_program(uint32_t seed, int num_vars, int num_ops, int num_devices) {
  std::mt19937 rng(seed);
  std::vector<RandomOp> ops;
  for (int i = 0; i < num_ops; ++i) {
    RandomOp op;
    std::vector<int> vars(static_cast<size_t>(num_vars));
    for (int v = 0; v < num_vars; ++v) vars[static_cast<size_t>(v)] = v;
    std::shuffle(vars.begin(), vars.end(), rng);
    const int nr = static_cast<int>(rng() % 4);
    const int nw = 1 + static_cast<int>(rng() % 2);
    op.reads.assign(vars.begin(), vars.begin() + nr);
    op.writes.assign(vars.begin() + nr, vars.begin() + nr + nw);
    op.device = static_cast<int>(rng() % static_cast<uint32_t>(num_devices));
    op.lane = rng() % 4 == 0 ? Lane::kCopy : Lane::kCompute;
    op.priority = static_cast<int>(rng() % 3);
    ops.push_back(std::move(op));
  }
  return ops;
}

// Each op mixes the values it reads into the values it writes: any reordering of dependent
// operations changes the final state.
std::vector<uint64_t> run_program(Engine& e, const std::vector<RandomOp>& program, int num_vars) {
  std::vector<uint64_t> values(static_cast<size_t>(num_vars));
  for (int v = 0; v < num_vars; ++v)
    values[static_cast<size_t>(v)] = static_cast<uint64_t>(v) * 7919;
  std::vector<Var*> vars(static_cast<size_t>(num_vars));
  for (auto& v : vars) v = e.new_var();
  for (size_t i = 0; i < program.size(); ++i) {
    const RandomOp& op = program[i];
    std::vector<Var*> r, w;
    for (int x : op.reads) r.push_back(vars[static_cast<size_t>(x)]);
    for (int x : op.writes) w.push_back(vars[static_cast<size_t>(x)]);
    e.push(
        [&values, &op, i](const RunContext&) {
          uint64_t acc = i * 0x9E3779B97F4A7C15ull;
          for (int x : op.reads) acc = acc * 31 + values[static_cast<size_t>(x)];
          for (int x : op.writes) {
            uint64_t& v = values[static_cast<size_t>(x)];
            v = (v ^ acc) * 0xBF58476D1CE4E5B9ull + 1;
          }
        },
        r, w, cpu(op.device), op.lane, op.priority);
  }
  e.wait_all();
  for (Var* v : vars) e.delete_var(v, nullptr);
  return values;
}

class EngineRandomGraph : public testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_num_cpu_devices(2); }
  void TearDown() override { set_num_cpu_devices(1); }
};

TEST_P(EngineRandomGraph, MatchesTheNaiveEngine) {
  const int workers = GetParam();
  constexpr int kVars = 12;
  constexpr int kOps = 3000;
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto program = make_program(seed, kVars, kOps, /*num_devices=*/2);
    auto naive = make_engine(EngineKind::kNaive);
    const auto expected = run_program(*naive, program, kVars);
    EngineOptions options;
    options.cpu_compute_workers = workers;
    options.copy_workers = std::min(workers, 2);
    options.max_in_flight = 256;
    auto threaded = make_engine(EngineKind::kThreaded, options);
    EXPECT_EQ(run_program(*threaded, program, kVars), expected)
        << "seed " << seed << ", " << workers << " workers";
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, EngineRandomGraph, testing::Values(1, 2, 4, 8));

}  // namespace
}  // namespace janus
