#include "black_box.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tether/mcap/writer.h"
#include "tether/proto/convert.h"
#include "tether/proto/mcap_schema.h"
#include "tether/proto/recording_topics.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.pb.h"
#include "wire.h"

namespace tether::remote::server {

namespace {

namespace fs = std::filesystem;

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr const char* kPrefix = "bb-";
constexpr const char* kBreachSuffix = ".breaches";

std::string segment_name(std::uint64_t sequence, std::int64_t start_unix_ns) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%06llu-%lld.mcap", kPrefix,
                static_cast<unsigned long long>(sequence),
                static_cast<long long>(start_unix_ns / 1000000));
  return name;
}

// bb-<sequence>-<start ms>.mcap → sequence, start; false for any other name.
bool parse_segment_name(const std::string& name, std::uint64_t& sequence,
                        std::int64_t& start_unix_ns) {
  unsigned long long seq = 0;
  long long ms = 0;
  int used = 0;
  if (std::sscanf(name.c_str(), "bb-%llu-%lld.mcap%n", &seq, &ms, &used) != 2) return false;
  if (static_cast<std::size_t>(used) != name.size()) return false;
  sequence = seq;
  start_unix_ns = ms * 1000000;
  return true;
}

std::vector<std::string> read_breaches(const fs::path& segment) {
  std::vector<std::string> ids;
  std::ifstream in(segment.string() + kBreachSuffix);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

// Appends the breach ids of a segment durably: the marks must survive what the segments do.
void write_breaches(const fs::path& segment, const std::vector<std::string>& ids) {
  const std::string path = segment.string() + kBreachSuffix;
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    spdlog::error("black box: cannot mark {}: {}", segment.string(), std::strerror(errno));
    return;
  }
  std::string text;
  for (const std::string& id : ids) text += id + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::error("black box: cannot mark {}: {}", segment.string(), std::strerror(errno));
  }
}

// A closed segment ends with the footer's magic; one its writer never closed does not.
bool ends_with_magic(const fs::path& path) {
  static constexpr char kMagic[] = {'\x89', 'M', 'C', 'A', 'P', '0', '\r', '\n'};
  std::ifstream in(path, std::ios::binary);
  char tail[sizeof kMagic] = {};
  in.seekg(-static_cast<std::streamoff>(sizeof tail), std::ios::end);
  return in.read(tail, sizeof tail) && std::equal(tail, tail + sizeof tail, kMagic);
}

std::string breach_id(std::int64_t unix_ns, BreachCause cause) {
  std::string id = "B" + std::to_string(unix_ns / 1000000) + "-" + to_string(cause);
  std::replace(id.begin(), id.end(), ' ', '-');
  return id;
}

// The time a breach id names [ns since the epoch]; nullopt when it is not one.
std::optional<std::int64_t> breach_time(const std::string& id) {
  long long ms = 0;
  if (std::sscanf(id.c_str(), "B%lld-", &ms) != 1) return std::nullopt;
  return static_cast<std::int64_t>(ms) * 1000000;
}

}  // namespace

struct BlackBox::Event {
  enum class Kind { kIncrement, kAudit, kTask } kind;
  std::int64_t unix_ns = 0;
  std::string data;  // the serialized message
  std::uint64_t task_id = 0;
  TaskInfo task;
};

struct BlackBox::Segment {
  std::unique_ptr<mcap::Writer> writer;
  std::uint16_t telemetry = 0, increments = 0, events = 0, audit = 0, tasks = 0;
  std::int64_t opened_steady_ns = 0;
};

BlackBox::BlackBox(ControlLoop& loop, const BlackBoxOptions& options,
                   std::map<std::string, std::string> metadata)
    : loop_(loop), options_(options), metadata_(std::move(metadata)) {
  const fs::path dir(options_.directory);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("black box: cannot create " + dir.string() + ": " + ec.message());
  }
  // What a previous run left: its segments stay in the ring (the last one possibly without
  // its footer: a crash), their marks with them.
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    SegmentInfo info;
    if (!entry.is_regular_file() ||
        !parse_segment_name(entry.path().filename().string(), info.sequence, info.start_unix_ns)) {
      continue;
    }
    info.path = entry.path();
    info.bytes = entry.file_size();
    info.end_unix_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::file_clock::to_sys(entry.last_write_time()).time_since_epoch())
            .count();
    info.breaches = read_breaches(info.path);
    info.complete = ends_with_magic(info.path);
    segments_.push_back(info);
    next_sequence_ = std::max(next_sequence_, info.sequence + 1);
  }
  std::sort(segments_.begin(), segments_.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.sequence < b.sequence; });
  open_segment(unix_now_ns());
  loop_.set_recording(true);
  thread_ = std::thread([this] { run(); });
}

BlackBox::~BlackBox() { stop(); }

void BlackBox::stop() {
  if (stop_.exchange(true)) return;
  loop_.wake_waiters();
  if (thread_.joinable()) thread_.join();
  loop_.set_recording(false);
  close_segment();
}

void BlackBox::record_task(std::uint64_t id, const std::string& name, std::uint64_t revision,
                           const TaskParameters& task, bool restart) {
  v1::RecordedTask message;
  message.set_id(id);
  message.set_name(name);
  message.set_revision(revision);
  message.set_restart(restart);
  *message.mutable_task() = proto::from_task(task);
  Event event{Event::Kind::kTask, unix_now_ns(), message.SerializeAsString(), id, {}};
  event.task.name = name;
  for (v1::Behaviour b : server::enabled_behaviours(task)) event.task.behaviours.push_back(b);
  event.task.period = task.period;
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

void BlackBox::record_increment(const HandControllerSample& sample) {
  v1::RecordedIncrement message;
  to_record(sample, &message);
  std::lock_guard lock(mutex_);
  events_.push_back(
      Event{Event::Kind::kIncrement, unix_now_ns(), message.SerializeAsString(), 0, {}});
}

void BlackBox::record_audit(const std::string& line) {
  v1::AuditEvent message;
  message.set_line(line);
  std::lock_guard lock(mutex_);
  events_.push_back(Event{Event::Kind::kAudit, unix_now_ns(), message.SerializeAsString(), 0, {}});
}

void BlackBox::open_segment(std::int64_t unix_ns) {
  auto segment = std::make_unique<Segment>();
  SegmentInfo info;
  info.sequence = next_sequence_++;
  info.start_unix_ns = unix_ns;
  info.end_unix_ns = unix_ns;
  info.path = fs::path(options_.directory) / segment_name(info.sequence, unix_ns);
  mcap::WriterOptions writer_options;
  writer_options.compression = mcap::Compression::kZstd;
  // A chunk a second at 1 kHz is ~0.5 MB before compression; the sync interval closes it
  // sooner, so this is only a bound.
  writer_options.chunk_size = 4 << 20;
  writer_options.profile = "tether";
  segment->writer = std::make_unique<mcap::Writer>(info.path, writer_options);
  mcap::Writer& w = *segment->writer;
  std::map<std::string, std::string> site = metadata_;
  site["recorder"] = "remote black box";
  w.add_metadata(recording::kSiteMetadata, site);
  segment->telemetry = proto::add_protobuf_channel<v1::Telemetry>(w, recording::kTelemetry);
  segment->increments =
      proto::add_protobuf_channel<v1::RecordedIncrement>(w, recording::kRemoteIncrements);
  segment->events = proto::add_protobuf_channel<v1::SiteEvent>(w, recording::kEvents);
  segment->audit = proto::add_protobuf_channel<v1::AuditEvent>(w, recording::kAudit);
  segment->tasks = proto::add_protobuf_channel<v1::RecordedTask>(w, recording::kTasks);
  segment->opened_steady_ns = steady_now_ns();
  // A segment read on its own still names the task sets its cycles ran: it starts with the
  // ones taken last.
  const std::uint64_t t = static_cast<std::uint64_t>(unix_ns);
  for (const auto& [id, message] : task_messages_) w.write(segment->tasks, t, t, message);
  open_ = std::move(segment);
  std::lock_guard lock(mutex_);
  segments_.push_back(info);
}

void BlackBox::close_segment() {
  if (!open_) return;
  try {
    open_->writer->close();
  } catch (const std::exception& e) {
    spdlog::error("black box: closing a segment: {}", e.what());
  }
  const std::uint64_t bytes = open_->writer->bytes_written();
  open_.reset();
  std::lock_guard lock(mutex_);
  if (!segments_.empty()) {
    segments_.back().bytes = bytes;
    segments_.back().complete = true;
  }
}

void BlackBox::run() {
  std::uint64_t seen = loop_.cycles_published();
  CycleTelemetry cycle;
  while (!stop_.load(std::memory_order_acquire)) {
    seen = loop_.wait_for_cycle(seen);
    try {
      while (loop_.recording().pop(cycle)) write_cycle(cycle);
      write_events();
      const std::int64_t now = steady_now_ns();
      bool rotate =
          now - open_->opened_steady_ns >= static_cast<std::int64_t>(options_.segment * 1e9);
      std::uint64_t asked = 0;
      {
        std::lock_guard lock(mutex_);
        asked = rotations_asked_;
        rotate = rotate || asked != rotations_done_;
      }
      if (rotate) {
        close_segment();
        prune();
        open_segment(unix_now_ns());
        std::lock_guard lock(mutex_);
        rotations_done_ = asked;
        rotated_.notify_all();
      } else if (now - last_sync_ns_ >= static_cast<std::int64_t>(options_.sync_interval * 1e9)) {
        open_->writer->sync();
        last_sync_ns_ = now;
        std::lock_guard lock(mutex_);
        segments_.back().bytes = open_->writer->bytes_written();
        segments_.back().end_unix_ns = last_unix_ns_;
      }
    } catch (const std::exception& e) {
      // A full or failing disk must not take the site down: the recording stops, loudly.
      spdlog::error("black box: recording stopped: {}", e.what());
      loop_.set_recording(false);
      open_.reset();
      std::lock_guard lock(mutex_);
      rotations_done_ = rotations_asked_;
      rotated_.notify_all();
      return;
    }
  }
}

void BlackBox::write_cycle(const CycleTelemetry& cycle) {
  const auto found = tasks_.find(cycle.task_id);
  static const TaskInfo kNoTask;
  const TaskInfo& task = found != tasks_.end() ? found->second : kNoTask;
  std::vector<v1::Behaviour> behaviours;
  behaviours.reserve(task.behaviours.size());
  for (int b : task.behaviours) behaviours.push_back(static_cast<v1::Behaviour>(b));
  v1::Telemetry message;
  to_wire(cycle, task.name, behaviours, task.period, &message);
  const auto t = static_cast<std::uint64_t>(cycle.sample_unix_ns);
  last_unix_ns_ = cycle.sample_unix_ns;
  open_->writer->write(open_->telemetry, t, t, message.SerializeAsString(),
                       static_cast<std::uint32_t>(cycle.cycle));

  if (have_previous_ && cycle.state == previous_.state) return;
  v1::SiteEvent event;
  event.set_cycle(cycle.cycle);
  event.set_state(proto::from_executor_state(cycle.state));
  event.set_previous(proto::from_executor_state(have_previous_ ? previous_.state : cycle.state));
  to_wire(cycle.breach, event.mutable_breach());
  event.set_task_id(cycle.task_id);
  event.set_task_name(task.name);
  const bool stop =
      (cycle.state == ExecutorState::kStopping || cycle.state == ExecutorState::kStopped) &&
      (!have_previous_ || previous_.state == ExecutorState::kRunning ||
       previous_.state == ExecutorState::kIdle || previous_.state == ExecutorState::kRecovering) &&
      cycle.breach.cause != BreachCause::kNone;
  if (stop) {
    const std::string id = breach_id(cycle.sample_unix_ns, cycle.breach.cause);
    event.set_breach_id(id);
    mark_breach(id);
  }
  open_->writer->write(open_->events, t, t, event.SerializeAsString());
  previous_ = cycle;
  have_previous_ = true;
}

void BlackBox::write_events() {
  std::deque<Event> events;
  {
    std::lock_guard lock(mutex_);
    events.swap(events_);
  }
  for (Event& e : events) {
    const auto t = static_cast<std::uint64_t>(e.unix_ns);
    switch (e.kind) {
      case Event::Kind::kIncrement:
        open_->writer->write(open_->increments, t, t, e.data);
        break;
      case Event::Kind::kAudit:
        open_->writer->write(open_->audit, t, t, e.data);
        break;
      case Event::Kind::kTask:
        tasks_[e.task_id] = e.task;
        task_messages_[e.task_id] = e.data;
        // The newest few are enough: a segment is seconds long.
        while (task_messages_.size() > 4) task_messages_.erase(task_messages_.begin());
        while (tasks_.size() > 64) tasks_.erase(tasks_.begin());
        open_->writer->write(open_->tasks, t, t, e.data);
        break;
    }
  }
}

void BlackBox::mark_breach(const std::string& id) {
  std::lock_guard lock(mutex_);
  // The open segment and the one before it: what led to the breach.
  const std::size_t n = segments_.size();
  for (std::size_t k = n >= 2 ? n - 2 : 0; k < n; ++k) {
    segments_[k].breaches.push_back(id);
    write_breaches(segments_[k].path, segments_[k].breaches);
  }
  spdlog::warn("black box: breach {} marked; fetch it with `tether blackbox fetch --around {}`", id,
               id);
}

void BlackBox::prune() {
  std::vector<fs::path> doomed;
  {
    std::lock_guard lock(mutex_);
    // The newest keep_breaches breach ids still protect their segments.
    std::vector<std::string> ids;
    for (const SegmentInfo& s : segments_) {
      for (const std::string& id : s.breaches) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
    std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
      return breach_time(a).value_or(0) < breach_time(b).value_or(0);
    });
    if (ids.size() > options_.keep_breaches) {
      ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(options_.keep_breaches));
    }
    const auto kept_for_breach = [&](const SegmentInfo& s) {
      return std::any_of(s.breaches.begin(), s.breaches.end(), [&](const std::string& id) {
        return std::find(ids.begin(), ids.end(), id) != ids.end();
      });
    };
    const std::int64_t horizon = unix_now_ns() - static_cast<std::int64_t>(options_.window * 1e9);
    std::uint64_t total = 0;
    for (const SegmentInfo& s : segments_) total += s.bytes;
    std::vector<SegmentInfo> kept;
    // Out of the window and not kept for a breach: gone.
    for (const SegmentInfo& s : segments_) {
      if (s.end_unix_ns < horizon && !kept_for_breach(s)) {
        doomed.push_back(s.path);
        total -= s.bytes;
      } else {
        kept.push_back(s);
      }
    }
    // Over the budget: the oldest first, breaches' segments only when nothing else is left.
    for (bool breaches : {false, true}) {
      for (auto it = kept.begin(); it != kept.end() && total > options_.budget;) {
        if (kept_for_breach(*it) == breaches) {
          doomed.push_back(it->path);
          total -= it->bytes;
          it = kept.erase(it);
        } else {
          ++it;
        }
      }
    }
    segments_ = std::move(kept);
  }
  for (const fs::path& path : doomed) {
    std::error_code ec;
    fs::remove(path, ec);
    fs::remove(path.string() + kBreachSuffix, ec);
  }
}

std::vector<SegmentInfo> BlackBox::segments() const {
  std::lock_guard lock(mutex_);
  return segments_;
}

std::vector<SegmentInfo> BlackBox::fetch(const SegmentQuery& query) {
  std::int64_t centre = 0;
  if (!query.all) {
    if (!query.breach_id.empty()) {
      bool known = false;
      {
        std::lock_guard lock(mutex_);
        for (const SegmentInfo& s : segments_) {
          known = known || std::find(s.breaches.begin(), s.breaches.end(), query.breach_id) !=
                               s.breaches.end();
        }
      }
      const std::optional<std::int64_t> t = breach_time(query.breach_id);
      if (!known || !t) {
        throw std::invalid_argument("breach_id '" + query.breach_id +
                                    "': no such breach is kept (tether blackbox list)");
      }
      centre = *t;
    } else {
      centre = query.around_unix_ns.value_or(unix_now_ns());
    }
  }
  // Close the open segment so every file fetched is whole.
  std::unique_lock lock(mutex_);
  const std::uint64_t ticket = ++rotations_asked_;
  rotated_.wait_for(lock, std::chrono::seconds(10),
                    [&] { return rotations_done_ >= ticket || stop_.load(); });
  std::vector<SegmentInfo> chosen;
  const auto from = centre - static_cast<std::int64_t>(query.before * 1e9);
  const auto to = centre + static_cast<std::int64_t>(query.after * 1e9);
  for (const SegmentInfo& s : segments_) {
    if (&s == &segments_.back() && !stop_.load()) continue;  // the new, empty open one
    if (query.all || (s.end_unix_ns >= from && s.start_unix_ns <= to)) chosen.push_back(s);
  }
  return chosen;
}

}  // namespace tether::remote::server
