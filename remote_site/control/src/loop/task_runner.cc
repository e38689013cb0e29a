#include "tether/remote/loop/task_runner.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

namespace tether::remote {
namespace {

void record_cycle(const CycleTelemetry& t, std::uint64_t task_id, int every,
                  TaskRunRecord& record) {
  if (t.task_id != task_id) return;
  const double f = t.wrench.head<3>().norm();
  const double tau = t.wrench.tail<3>().norm();
  record.peak_force = std::max(record.peak_force, f);
  record.peak_torque = std::max(record.peak_torque, tau);
  if (t.breach && !record.breach) record.breach = t.breach;
  if (record.cycles++ % static_cast<std::uint64_t>(every) != 0) return;
  record.time.push_back(t.task_time);
  record.aux0.push_back(t.aux[0]);
  record.force.push_back(f);
  record.torque.push_back(tau);
  record.error.push_back(t.error);
  record.wrench.push_back(t.wrench);
  record.joints.push_back(t.commanded_joints);
  record.measured_joints.push_back(t.measured_joints);
  record.velocity.push_back(t.velocity);
  record.force_sum.push_back(t.force);
}

}  // namespace

TaskRunRecord run_task(ArmInterface& arm, const TaskParameters& task,
                       const TaskRunOptions& options) {
  auto queue = std::make_unique<HandControllerQueue>();
  auto executor = std::make_unique<Executor>(arm.model(), *queue);
  auto loop = std::make_unique<ControlLoop>(arm, *executor, options.pacing);
  loop->set_cpu(options.loop_cpu);
  const std::uint64_t id = executor->submit(task, true);
  const int every = std::max(1, options.record_every);
  const auto cycles = static_cast<std::uint64_t>(std::llround(options.duration / task.period));

  TaskRunRecord record;
  // Every record is sized up front: growing one frees its old block, which for blocks this
  // large goes back to the kernel (munmap) and interrupts every CPU the process runs on,
  // the control loop's among them, to flush its TLB.
  const std::uint64_t rows = cycles / static_cast<std::uint64_t>(every) + 2;
  record.time.reserve(rows);
  record.aux0.reserve(rows);
  record.force.reserve(rows);
  record.torque.reserve(rows);
  record.error.reserve(rows);
  record.wrench.reserve(rows);
  record.joints.reserve(rows);
  record.measured_joints.reserve(rows);
  record.velocity.reserve(rows);
  record.force_sum.reserve(rows);
  std::uint64_t sequence = 0;
  auto feed = [&](double time) {
    if (!options.hand_controller) return;
    HandControllerSample s = options.hand_controller(time, task.period);
    s.sequence = ++sequence;
    queue->push(s);
  };
  CycleTelemetry t;

  if (options.pacing == Pacing::kBatch) {
    // The first cycle picks the task up; then one task-time period per cycle.
    for (std::uint64_t n = 0; n <= cycles; ++n) {
      feed(static_cast<double>(n) * task.period);
      loop->run_cycles(1);
      while (loop->telemetry().pop(t)) record_cycle(t, id, every, record);
    }
  } else {
    loop->start();
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::duration<double>(options.duration + task.period);
    auto next = start;
    while (std::chrono::steady_clock::now() < end) {
      // The script runs on its own thread-side clock, as a ground station would.
      next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(task.period));
      feed(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      while (loop->telemetry().pop(t)) record_cycle(t, id, every, record);
      executor->collect_garbage();
      std::this_thread::sleep_until(next);
    }
    loop->stop();
    while (loop->telemetry().pop(t)) record_cycle(t, id, every, record);
  }
  const ExecutorStatus status = executor->status();
  record.final_state = status.state;
  if (!record.breach) record.breach = status.breach;
  record.teleoperation = status.teleoperation;
  record.statistics = loop->statistics();
  return record;
}

void write_csv(const TaskRunRecord& record, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "time_s,aux0,force_n,torque_nm,fx,fy,fz,tx,ty,tz";
  for (int i = 0; i < 7; ++i) out << ",error" << i;
  for (int i = 0; i < 7; ++i) out << ",q" << i + 1;
  for (int i = 0; i < 7; ++i) out << ",measured_q" << i + 1;
  for (int i = 0; i < 7; ++i) out << ",velocity" << i;
  for (int i = 0; i < 7; ++i) out << ",force_sum" << i;
  out << '\n';
  for (std::size_t k = 0; k < record.time.size(); ++k) {
    out << record.time[k] << ',' << record.aux0[k] << ',' << record.force[k] << ','
        << record.torque[k];
    for (int i = 0; i < 6; ++i) out << ',' << record.wrench[k][i];
    for (int i = 0; i < 7; ++i) out << ',' << record.error[k][i];
    for (int i = 0; i < 7; ++i) out << ',' << record.joints[k][i];
    for (int i = 0; i < 7; ++i) out << ',' << record.measured_joints[k][i];
    for (int i = 0; i < 7; ++i) out << ',' << record.velocity[k][i];
    for (int i = 0; i < 7; ++i) out << ',' << record.force_sum[k][i];
    out << '\n';
  }
  if (!out) throw std::runtime_error("error writing " + path);
}

}  // namespace tether::remote
