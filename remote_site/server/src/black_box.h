#pragma once

// The remote site's black box: a flight data recorder's promise — the last minutes before an
// event always survive. Every control cycle's telemetry (with the inputs it took and, at a
// task's start, the arm's checkpoint: what `tether replay` needs), every increment as it
// entered the executor's queue, every state change and breach, every audit line and every
// task set taken go into MCAP files (docs/recordings.md) on disk:
//
//   directory/bb-000042-1764322000123.mcap   a segment: sequence number, first message [ms]
//   directory/bb-000042-1764322000123.mcap.breaches   the breaches it is kept for, a line each
//
// Segments are a bounded ring. The open one is flushed as a compressed chunk and fsynced at
// least every `sync_interval` and closed (summary, footer, fsync) every `segment` seconds,
// so a crash of the process — SIGKILL included — loses at most the last interval: what is on
// disk is a readable prefix (the reader recovers a segment without its footer). Closed
// segments older than `window`, or beyond the disk `budget`, are deleted oldest first; a
// breach marks the open segment and the one before it (what led to it) so they are kept past
// the window for the newest `keep_breaches` breaches, still within the budget.
//
// Threads. The recorder thread follows the loop on a ring of its own
// (ControlLoop::recording()), never on the telemetry hub, whose subscribers may lag; with 4096
// cycles of room it rides out a 4 s stall of the disk. Increments, audit lines and tasks come
// from the service's threads through a short mutex-guarded queue. Nothing here runs on the
// control-loop thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tether/remote/loop/control_loop.h"
#include "tether/remote/server/remote_site_server.h"

namespace tether::remote::server {

// A segment as the site keeps it.
struct SegmentInfo {
  std::filesystem::path path;
  std::uint64_t sequence = 0;
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> breaches;  // ids it is kept for
  bool complete = false;              // closed with its summary
};

// Which segments a fetch wants.
struct SegmentQuery {
  bool all = false;
  std::optional<std::int64_t> around_unix_ns;
  std::string breach_id;  // instead of a time: the breach's
  double before = 120.0;  // [s]
  double after = 30.0;    // [s]
};

class BlackBox {
 public:
  // Reads the segments a previous run left in the directory (creating it), then starts
  // recording into a new segment. Throws std::runtime_error naming the directory when it
  // cannot be created or written. `metadata` goes into every segment ("tether.site").
  BlackBox(ControlLoop& loop, const BlackBoxOptions& options,
           std::map<std::string, std::string> metadata);
  ~BlackBox();
  BlackBox(const BlackBox&) = delete;
  BlackBox& operator=(const BlackBox&) = delete;

  // ---- any thread ----
  // The executor took this task set (id as submit() returned it).
  void record_task(std::uint64_t id, const std::string& name, std::uint64_t revision,
                   const TaskParameters& task, bool restart);
  // An increment entered the executor's queue.
  void record_increment(const HandControllerSample& sample);
  // A line the audit trail appended.
  void record_audit(const std::string& line);

  // Closes the open segment (a new one starts), then lists the segments `query` selects,
  // oldest first. Throws std::invalid_argument for an unknown breach id.
  std::vector<SegmentInfo> fetch(const SegmentQuery& query);
  // Every segment kept, and the breach ids, without closing anything.
  std::vector<SegmentInfo> segments() const;

  // Stops the recorder thread and closes the open segment.
  void stop();

 private:
  struct Event;
  struct Segment;
  void run();
  void open_segment(std::int64_t unix_ns);
  void close_segment();
  void prune();
  void write_cycle(const CycleTelemetry& cycle);
  void write_events();
  void mark_breach(const std::string& id);

  ControlLoop& loop_;
  BlackBoxOptions options_;
  std::map<std::string, std::string> metadata_;

  mutable std::mutex mutex_;  // segments_, events_, requests
  std::condition_variable rotated_;
  std::vector<SegmentInfo> segments_;  // closed ones and the open one (last), oldest first
  std::deque<Event> events_;
  std::uint64_t rotations_asked_ = 0;
  std::uint64_t rotations_done_ = 0;

  // Recorder thread only.
  std::unique_ptr<Segment> open_;
  std::uint64_t next_sequence_ = 1;
  struct TaskInfo {
    std::string name;
    std::vector<int> behaviours;
    double period = 0.001;
  };
  std::map<std::uint64_t, TaskInfo> tasks_;
  std::map<std::uint64_t, std::string> task_messages_;  // RecordedTask, serialized
  CycleTelemetry previous_;
  bool have_previous_ = false;
  std::int64_t last_sync_ns_ = 0;
  std::int64_t last_unix_ns_ = 0;

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tether::remote::server
