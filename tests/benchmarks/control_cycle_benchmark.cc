// One full control cycle of the executor with every behaviour enabled (trajectory,
// teleoperation with a sample every cycle, force control, joint-limit and singularity
// avoidance, singularity robustness, dither, proximity, manipulability) on both shipped
// arms. The arm is the ideal kinematic arm of the tests, so the time is the executor's
// alone. Each cycle is timed individually for the median and the 99.9th percentile.
//
// The same cycle with the constrained-optimisation resolver (the seed's six task rows, its
// reference-posture criterion on) is timed beside the default DLS resolver in the same run.
//
// Targets (developers' brief): median ≤ 5 µs, p99.9 ≤ 20 µs with DLS; median ≤ 10 µs,
// p99.9 ≤ 40 µs with constrained optimisation. Exit status 1 if missed.

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "all_behaviours.h"
#include "fake_arm.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/loop/executor.h"

namespace {

using namespace tether;
using namespace tether::remote;

struct Percentiles {
  double p50_us = 0, p999_us = 0, max_us = 0;
};
std::map<std::string, Percentiles> g_results;

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

void BM_ControlCycle(benchmark::State& bench, const std::string& arm_name, ResolverKind resolver) {
  const ArmModel model = arm_name == "panda" ? load_panda_arm() : load_default_arm();
  JointVector q0;
  q0 << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  if (arm_name == "panda") q0 << 0.1, 0.3, -0.1, -1.8, 0.2, 2.0, 0.3;
  auto queue = std::make_unique<HandControllerQueue>();
  TaskParameters task = testing::all_behaviours_task();
  task.resolver.kind = resolver;
  if (resolver == ResolverKind::kConstrainedOptimisation) {
    task.resolver.constrained_optimisation.track_arm_angle = false;
    task.resolver.constrained_optimisation.beta.setConstant(1e-3);
    task.resolver.constrained_optimisation.q_ref = q0;
  }
  std::unique_ptr<testing::FakeArm> arm;
  std::unique_ptr<Executor> executor;
  std::uint64_t seq = 0;
  JointCommand command;
  ArmState state;
  double time = 0.0;
  auto one_cycle = [&](double* elapsed_ns) {
    HandControllerSample s;
    s.sequence = ++seq;
    // Back and forth, so the operator's input does not wander off.
    const double sign = (seq / 500) % 2 == 0 ? 1.0 : -1.0;
    s.increment << sign * 1e-6, 0, 0, 0, 0, sign * 1e-6;
    queue->push(s);
    const ArmStatus status = arm->read(state);
    const double t0 = now_ns();
    executor->cycle(state, status, command);
    const double t1 = now_ns();
    benchmark::DoNotOptimize(command);
    arm->write(command);
    time += 0.001;
    arm->advance_to(time);
    if (elapsed_ns != nullptr) *elapsed_ns = t1 - t0;
  };
  // Episodes of 10 s of task time from the start posture: a run of millions of cycles would
  // otherwise let teleoperation, dither and manipulability walk the arm anywhere.
  auto new_episode = [&] {
    executor.reset();
    arm = std::make_unique<testing::FakeArm>(model, q0);
    arm->proximity.valid = true;
    arm->proximity.distance = 0.16;
    arm->proximity.surface_normal = Vector3(0.05, 0.0, 1.0).normalized();
    arm->tool_mass = 0.8;
    executor = std::make_unique<Executor>(model, *queue);
    executor->submit(task);
    for (int i = 0; i < 100; ++i) one_cycle(nullptr);
  };
  new_episode();
  int episode_cycles = 0;

  // Time the executor's cycle only: the fake arm's read/advance are outside the window.
  std::vector<double> samples;
  samples.reserve(4'000'000);
  for (auto _ : bench) {
    if (++episode_cycles == 10000) {
      bench.PauseTiming();
      if (executor->status().state != ExecutorState::kRunning) break;
      new_episode();
      episode_cycles = 0;
      bench.ResumeTiming();
    }
    double elapsed = 0.0;
    one_cycle(&elapsed);
    if (samples.size() < samples.capacity()) samples.push_back(elapsed);
  }
  if (executor->status().state != ExecutorState::kRunning) {
    bench.SkipWithError(("executor left running: " + describe(executor->status().breach)).c_str());
    return;
  }
  std::sort(samples.begin(), samples.end());
  Percentiles p;
  p.p50_us = samples[samples.size() / 2] * 1e-3;
  p.p999_us = samples[std::min(samples.size() - 1, samples.size() * 999 / 1000)] * 1e-3;
  p.max_us = samples.back() * 1e-3;
  bench.counters["p50_us"] = p.p50_us;
  bench.counters["p99.9_us"] = p.p999_us;
  bench.counters["max_us"] = p.max_us;
  g_results[std::string(resolver == ResolverKind::kDls ? "dls" : "co") + "/" + arm_name] = p;
}

}  // namespace

int main(int argc, char** argv) {
  for (const char* arm : {"iiwa7", "panda"}) {
    for (const ResolverKind kind : {ResolverKind::kDls, ResolverKind::kConstrainedOptimisation}) {
      const std::string name = std::string("ControlCycle/all_behaviours/") +
                               (kind == ResolverKind::kDls ? "dls/" : "co/") + arm;
      benchmark::RegisterBenchmark(name.c_str(), BM_ControlCycle, std::string(arm), kind)
          ->MinTime(3.0);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  bool ok = !g_results.empty();
  std::printf(
      "\ncontrol cycle, every behaviour on (targets: dls median <= 5 us, p99.9 <= 20 us; "
      "co median <= 10 us, p99.9 <= 40 us)\n");
  std::printf("%-12s %10s %10s %10s %14s\n", "resolver/arm", "median", "p99.9", "max",
              "median co/dls");
  for (const auto& [name, p] : g_results) {
    const bool co = name.rfind("co/", 0) == 0;
    const bool met =
        co ? p.p50_us <= 10.0 && p.p999_us <= 40.0 : p.p50_us <= 5.0 && p.p999_us <= 20.0;
    ok = ok && met;
    std::string ratio;
    if (co) {
      const auto dls = g_results.find("dls/" + name.substr(3));
      if (dls != g_results.end() && dls->second.p50_us > 0.0) {
        ratio = std::to_string(p.p50_us / dls->second.p50_us).substr(0, 4) + "x";
      }
    }
    std::printf("%-12s %8.2f us %8.2f us %8.2f us %14s  %s\n", name.c_str(), p.p50_us, p.p999_us,
                p.max_us, ratio.c_str(), met ? "ok" : "MISSED");
  }
  return ok ? 0 : 1;
}
