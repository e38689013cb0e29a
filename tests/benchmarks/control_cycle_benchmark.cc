// One full control cycle of the executor with every behaviour enabled (trajectory,
// teleoperation with a sample every cycle, force control, joint-limit and singularity
// avoidance, singularity robustness, dither, proximity, manipulability) on both shipped
// arms. The arm is the ideal kinematic arm of the tests, so the time is the executor's
// alone. Each cycle is timed individually for the median and the 99.9th percentile.
//
// The same cycle with the constrained-optimisation resolver (the seed's six task rows, its
// reference-posture criterion on) is timed beside the default DLS resolver in the same run.
//
// The machine's own noise floor is measured beside every cycle: a fixed-cost peer (a chain
// of dependent arithmetic on a few cache lines, calibrated to the cycle's median) is timed
// right after each cycle, so both see the same interrupts, host pauses and frequency
// changes. What the cycle's tail has beyond the peer's is the cycle's own (page faults,
// cache misses, data-dependent work); what both have is the machine's.
// The thread is pinned to the last CPU with its memory locked; the summary says what was
// granted (TETHER_BENCH_QUIET=0: neither). Not SCHED_FIFO: a real-time thread that never
// sleeps is throttled by the kernel for 50 ms of every second, which would be the maximum.
//
// Targets (developers' brief and issue): median ≤ 5 µs with DLS and ≤ 10 µs with
// constrained optimisation; p99.9 ≤ 20 µs (DLS) / 40 µs (constrained optimisation) on a
// quiet machine, and in any case within 1.5× of the noise floor's p99.9. Exit status 1 if
// missed.

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
struct Result {
  Percentiles cycle;
  Percentiles floor;  // the fixed-cost peer, same run, as many samples
};
std::map<std::string, Result> g_results;

Percentiles percentiles(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  Percentiles p;
  p.p50_us = samples[samples.size() / 2] * 1e-3;
  p.p999_us = samples[std::min(samples.size() - 1, samples.size() * 999 / 1000)] * 1e-3;
  p.max_us = samples.back() * 1e-3;
  return p;
}

// The noise-floor peer: the same instructions every call, no allocation, no branch that
// depends on data, a working set of 512 bytes.
double g_peer_state[64];
void fixed_cost(int rounds) {
  double a = g_peer_state[0];
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 64; ++i) {
      a = a * 0.999999 + g_peer_state[i] * 1e-9;
      g_peer_state[i] = a;
    }
  }
  benchmark::DoNotOptimize(a);
}

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

  // Calibrate the peer to the cycle's median (200 cycles from an episode's start).
  std::vector<double> calibration;
  for (int i = 0; i < 201; ++i) {
    double elapsed = 0.0;
    one_cycle(&elapsed);
    calibration.push_back(elapsed);
  }
  std::sort(calibration.begin(), calibration.end());
  const double cycle_median_ns = calibration[calibration.size() / 2];
  auto time_peer = [](int rounds) {
    const double t0 = now_ns();
    fixed_cost(rounds);
    return now_ns() - t0;
  };
  int rounds = 1;
  for (int i = 0; i < 40; ++i) {
    std::vector<double> t;
    for (int k = 0; k < 101; ++k) t.push_back(time_peer(rounds));
    std::sort(t.begin(), t.end());
    const double median = t[t.size() / 2];
    if (median >= cycle_median_ns) break;
    rounds =
        std::max(rounds + 1, static_cast<int>(rounds * cycle_median_ns / std::max(median, 1.0)));
  }
  new_episode();

  // Time the executor's cycle only: the fake arm's read/advance are outside the window.
  std::vector<double> samples;
  std::vector<double> floor_samples;
  samples.reserve(4'000'000);
  floor_samples.reserve(4'000'000);
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
    const double floor_elapsed = time_peer(rounds);
    if (samples.size() < samples.capacity()) {
      samples.push_back(elapsed);
      floor_samples.push_back(floor_elapsed);
    }
  }
  if (executor->status().state != ExecutorState::kRunning) {
    bench.SkipWithError(("executor left running: " + describe(executor->status().breach)).c_str());
    return;
  }
  Result result;
  result.cycle = percentiles(std::move(samples));
  result.floor = percentiles(std::move(floor_samples));
  bench.counters["p50_us"] = result.cycle.p50_us;
  bench.counters["p99.9_us"] = result.cycle.p999_us;
  bench.counters["max_us"] = result.cycle.max_us;
  bench.counters["floor_p99.9_us"] = result.floor.p999_us;
  g_results[std::string(resolver == ResolverKind::kDls ? "dls" : "co") + "/" + arm_name] = result;
}

// Pins the thread to the last CPU and locks memory; returns what was granted, for the summary.
std::string enter_quiet_mode() {
  std::string granted;
  if (const char* env = std::getenv("TETHER_BENCH_QUIET"); env != nullptr && env[0] == '0') {
    return "not pinned, memory not locked (TETHER_BENCH_QUIET=0)";
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 1) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(cpus - 1), &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0) {
      granted += "pinned to CPU " + std::to_string(cpus - 1);
    }
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
    granted += granted.empty() ? "memory locked" : ", memory locked";
  }
  return granted.empty() ? "neither pinning nor mlockall granted" : granted;
}

// What no code on this thread can avoid: a thread that only reads the clock, pinned like
// the cycle, for `seconds`; every gap above 10 µs is the machine taking the CPU away (timer
// ticks, host exits). On the 2-core development VM it saw about 1360 pauses a second of
// 37 µs median, one per ~1 ms timer tick, so any work longer than a microsecond or two has
// a p99.9 of at least that, whatever it is: the reason the floor is measured beside it.
struct MachinePauses {
  double per_second = 0.0;
  double p50_us = 0.0;
  double max_us = 0.0;
};

MachinePauses probe_machine_pauses(double seconds) {
  const auto now_us = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
  };
  std::vector<double> gaps;
  gaps.reserve(static_cast<std::size_t>(seconds * 20000.0));
  const double start = now_us();
  double last = start;
  while (last - start < seconds * 1e6) {
    const double t = now_us();
    if (t - last > 10.0 && gaps.size() < gaps.capacity()) gaps.push_back(t - last);
    last = t;
  }
  MachinePauses m;
  if (gaps.empty()) return m;
  std::sort(gaps.begin(), gaps.end());
  m.per_second = static_cast<double>(gaps.size()) / seconds;
  m.p50_us = gaps[gaps.size() / 2];
  m.max_us = gaps.back();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string quiet = enter_quiet_mode();
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
  const MachinePauses pauses = probe_machine_pauses(2.0);
  std::printf("\ncontrol cycle, every behaviour on; %s\n", quiet.c_str());
  std::printf(
      "machine: a thread that only reads the clock lost the CPU %.0f times/s for > 10 us "
      "(median %.1f us, max %.0f us)\n",
      pauses.per_second, pauses.p50_us, pauses.max_us);
  std::printf(
      "targets: median <= 5 us (dls) / 10 us (co); p99.9 <= 20 us (dls) / 40 us (co) on a quiet "
      "machine, else within 1.5x of the noise floor's\n");
  std::printf("%-12s %9s %9s %10s | %9s %9s %10s | %8s %7s\n", "resolver/arm", "median", "p99.9",
              "max", "floor p50", "p99.9", "max", "p99.9/fl", "co/dls");
  for (const auto& [name, r] : g_results) {
    const bool co = name.rfind("co/", 0) == 0;
    const double median_target = co ? 10.0 : 5.0;
    const double tail_target = co ? 40.0 : 20.0;
    const double tail_ratio = r.cycle.p999_us / std::max(r.floor.p999_us, 1e-9);
    const bool met =
        r.cycle.p50_us <= median_target && (r.cycle.p999_us <= tail_target || tail_ratio <= 1.5);
    ok = ok && met;
    char ratio[32] = "";
    if (co) {
      const auto dls = g_results.find("dls/" + name.substr(3));
      if (dls != g_results.end() && dls->second.cycle.p50_us > 0.0) {
        std::snprintf(ratio, sizeof(ratio), "%.2fx", r.cycle.p50_us / dls->second.cycle.p50_us);
      }
    }
    std::printf("%-12s %6.2f us %6.2f us %7.1f us | %6.2f us %6.2f us %7.1f us | %7.2fx %7s  %s\n",
                name.c_str(), r.cycle.p50_us, r.cycle.p999_us, r.cycle.max_us, r.floor.p50_us,
                r.floor.p999_us, r.floor.max_us, tail_ratio, ratio, met ? "ok" : "MISSED");
  }
  return ok ? 0 : 1;
}
