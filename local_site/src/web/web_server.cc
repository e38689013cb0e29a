#include "tether/local/web/web_server.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <variant>

#include "tether/local/commands/task_command.h"
#include "tether/local/console/preview.h"
#include "tether/local/ground/ground_station.h"
#include "tether/local/web/latest_slot.h"
#include "tether/local/web/web_protocol.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_diff.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/task/validation.h"

namespace tether::local::web {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using AnyStream = std::variant<PlainStream, TlsStream>;
using AnyWebSocket = std::variant<websocket::stream<PlainStream>, websocket::stream<TlsStream>>;
constexpr const char* kSessionCookie = "tether_session";

namespace {

// How often the server thread looks for new samples and due clients: 5 ms keeps a 60 Hz
// client within a quarter period of its schedule at 200 wake-ups a second.
constexpr auto kTick = std::chrono::milliseconds(5);
constexpr auto kHttpTimeout = std::chrono::seconds(30);
// [bytes] per WebSocket: 20 telemetry messages; 64 KiB a round trip carries 6 MB/s at
// 10 ms, far above 60 Hz of telemetry.
constexpr int kSendBuffer = 64 * 1024;

// "1", "0.5", "60": numbers in messages as people write them.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A request the server refuses before calling anything: the message names the field, the
// value and what is allowed.
class RequestError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::string quoted(const json& value) { return value.dump(); }

std::string get_string(const json& request, const char* field) {
  const auto it = request.find(field);
  if (it == request.end()) throw RequestError(std::string(field) + ": missing; expected a string");
  if (!it->is_string()) {
    throw RequestError(std::string(field) + " = " + quoted(*it) + ": expected a string");
  }
  return it->get<std::string>();
}

bool get_bool(const json& request, const char* field, std::optional<bool> fallback = {}) {
  const auto it = request.find(field);
  if (it == request.end()) {
    if (fallback) return *fallback;
    throw RequestError(std::string(field) + ": missing; expected true or false");
  }
  if (!it->is_boolean()) {
    throw RequestError(std::string(field) + " = " + quoted(*it) + ": expected true or false");
  }
  return it->get<bool>();
}

double get_number(const json& request, const char* field, double lo, double hi,
                  std::optional<double> fallback = {}) {
  const auto it = request.find(field);
  if (it == request.end()) {
    if (fallback) return *fallback;
    throw RequestError(std::string(field) + ": missing; expected a number in [" + number_text(lo) +
                       ", " + number_text(hi) + "]");
  }
  if (!it->is_number() || !(it->get<double>() >= lo && it->get<double>() <= hi)) {
    throw RequestError(std::string(field) + " = " + quoted(*it) + ": expected a number in [" +
                       number_text(lo) + ", " + number_text(hi) + "]");
  }
  return it->get<double>();
}

json summary_json(const TaskSummary& s) {
  json behaviours = json::array();
  for (Behaviour b : s.behaviours) behaviours.push_back(to_string(b));
  return {{"name", s.name},
          {"revision", s.revision},
          {"period", s.period},
          {"behaviours", behaviours},
          {"summary", task_summary(s.period, s.behaviours)}};
}

json error_reply(const json& id, const std::string& message) {
  return {
      {"type", "reply"}, {"id", id}, {"ok", false}, {"error", message}, {"errors", json::array()}};
}

// A small pool of threads for blocking calls.
// The console's threads run at nice kConsoleNice: on a machine whose cores the link's gRPC
// threads share with browsers' telemetry, the link goes first (the real-time threads are
// SCHED_FIFO and above both anyway). The stop worker keeps the default: a STOP is not
// the console's to delay. Failing to lower it (a sandbox) leaves the default.
constexpr int kConsoleNice = 5;
void lower_priority() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kConsoleNice);
}

class Workers {
 public:
  // `nice`: the threads yield to the link (lower_priority) unless they carry STOPs.
  explicit Workers(int count, bool nice = true) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this, nice] {
        if (nice) lower_priority();
        run();
      });
    }
  }
  ~Workers() { join(); }
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
  }
  // Finishes the jobs in progress, drops those not started.
  void join() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      jobs_.clear();
    }
    ready_.notify_all();
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class WsSession;

}  // namespace

// One site as the server sees it. The slot is shared with the site's telemetry thread; the
// rest belongs to the server thread.
struct SiteView {
  WebSite site;
  std::size_t index = 0;         // in WebServer::Impl::sites
  std::unique_ptr<ArmView> arm;  // null: an arm the ground cannot model
  struct Sample {
    TelemetrySample telemetry;
    bool has_predicted = false;
    JointVector predicted = JointVector::Zero();
  };
  LatestSlot<Sample> slot;
  std::atomic<std::uint64_t> published{0};
  // Server thread only.
  std::uint64_t seq = 0;  // samples taken from the slot
  // The telemetry message of sample `seq`, once built and serialised: the same text for
  // every client (each adds only its own "dropped"), so ten clients cost one dump.
  std::optional<std::string> message;
  std::uint64_t message_seq = 0;
  ExecutorState state = ExecutorState::kUnspecified;
  std::uint64_t task_id = 0;
  std::string task_name;
  Breach breach;
  std::optional<TaskParameters> task;  // the running task's parameters (GetTask)
  std::uint64_t task_fetched_for = ~0ULL;
  bool connected = false;
  bool polled = false;
  std::string lease_holder;
  double rtt_ms = -1.0;
  std::string error;       // why the last status poll failed
  std::string scene_name;  // the scene the site reports; previews run in it
  SceneDescription scene;  // its description: names and ranges the aux readings
  // [ms since the Unix epoch] the ground's clock at the last successful status poll; 0 none.
  std::int64_t polled_unix_ms = 0;
};

// A person who may log in, and their clients of the sites (index as the sites), which
// carry their certificate: the sites see, audit and lease them by name.
struct Person {
  WebUser user;
  std::vector<std::unique_ptr<RemoteSiteClient>> clients;
};

namespace {

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  // `person` and `login` (the session cookie) when logins are on, else null and "".
  WsSession(WebServer::Impl& server, AnyStream stream, std::uint64_t id, Person* person,
            std::string login);
  void start(http::request<http::string_body> request);
  void send(std::string text);
  // Sends sample `seq` of site `site` (only when due()).
  void offer_telemetry(std::size_t site, std::uint64_t seq, const std::string& message);
  void close();

  std::uint64_t id() const { return id_; }
  bool open() const { return open_; }
  const std::string& login() const { return login_; }
  // Whether this client should get telemetry now: subscribed, its period elapsed, and its
  // socket free. Each period that finds its socket still writing is a sample missed
  // (counted in "dropped"); the newest sample goes out as soon as the socket is free.
  bool due(Clock::time_point now);
  void advance(Clock::time_point now) {
    next_due_ += period_;
    if (next_due_ <= now) next_due_ = now + period_;  // fell behind: do not burst
  }
  std::uint64_t sent_seq(std::size_t site) const { return sent_seq_[site]; }
  std::size_t queued_bytes() const { return queued_bytes_; }
  void reply(const json& message) { send(message.dump()); }
  void request_started() { ++in_flight_; }
  void request_done() { --in_flight_; }

 private:
  void read();
  void on_read(beast::error_code error, std::size_t bytes);
  void write();
  void on_write(beast::error_code error, std::size_t bytes);
  void fail();
  void handle(const std::string& text);
  void dispatch(const json& request);
  void set_rate(double hz) {
    period_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / hz));
    next_due_ = Clock::now();
    subscribed_ = true;
  }

  // The client a request to site `s` goes through: the person's own, else the ground's.
  RemoteSiteClient* client(const SiteView& s) const {
    return person_ != nullptr ? person_->clients[s.index].get() : s.site.client;
  }

  WebServer::Impl& server_;
  AnyWebSocket ws_;
  Person* person_;
  std::string login_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool open_ = true;
  std::uint64_t id_;
  bool subscribed_ = false;
  Clock::duration period_{};
  Clock::time_point next_due_{};
  std::vector<std::uint64_t> sent_seq_;
  std::uint64_t dropped_ = 0;
  bool late_ = false;
  std::size_t in_flight_ = 0;
};

}  // namespace

struct WebServer::Impl {
  WebServerOptions options;
  std::vector<std::unique_ptr<SiteView>> sites;
  std::unique_ptr<net::io_context> ioc = std::make_unique<net::io_context>(1);
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::steady_timer> timer;
  std::thread thread;
  std::unique_ptr<Workers> workers;
  std::unique_ptr<Workers> stopper;        // stop requests only: never behind a slow call
  std::unique_ptr<Workers> checker;        // password checks (PBKDF2, ~0.5 s each) only
  std::unique_ptr<net::ssl::context> tls;  // null: plain HTTP
  LoginTable logins;
  std::map<std::string, std::unique_ptr<Person>, std::less<>> people;  // empty: no logins
  // One status poller per site: a site that does not answer holds up its own poll for the
  // call's deadline, never the others' (one thread for all left every site "unreachable"
  // while one was).
  std::vector<std::thread> pollers;
  std::mutex poller_mutex;
  std::condition_variable poller_wake;
  bool stopping = false;
  int port = 0;
  // Who holds the browser's teleoperation (logins on); read by the ground's main thread.
  mutable std::mutex teleop_mutex;
  std::string teleop_person;
  // Server thread only.
  std::map<std::uint64_t, std::weak_ptr<WsSession>> sessions;
  std::uint64_t next_session = 1;
  // Statistics, read from any thread.
  std::atomic<std::uint64_t> sent{0}, skipped{0};
  std::atomic<std::size_t> clients{0}, queued_bytes{0};

  void accept();
  bool logins_on() const { return !people.empty(); }
  // The origin a page of this console has, for the Host header a request carries.
  std::string own_origin(std::string_view host) const {
    return std::string(tls ? "https://" : "http://") + std::string(host);
  }
  Person* person(std::string_view name) const {
    const auto it = people.find(name);
    return it == people.end() ? nullptr : it->second.get();
  }
  // Closes the WebSockets opened with login `token` (after a logout).
  void close_login(const std::string& token);
  void tick();
  void poll_site(SiteView& s);
  json hello(const Person* person) const;
  json site_message(const SiteView& s) const;
  void broadcast(const std::string& text) {
    for (auto& [id, weak] : sessions) {
      if (auto s = weak.lock(); s && s->open()) s->send(text);
    }
  }
  void take_samples();
  void fetch_task(SiteView& s);
  // Releases the browser's teleoperation held by `session` (0: by anyone), telling every
  // client why.
  void release_teleop(std::uint64_t session, const std::string& reason) {
    if (!options.gamepad || !options.gamepad->release(session)) return;
    {
      std::lock_guard lock(teleop_mutex);
      teleop_person.clear();
    }
    broadcast(json{
        {"type", "teleop"},
        {"site", options.teleop_site},
        {"enabled", false},
        {"mode", ""},
        {"reason",
         reason}}.dump());
  }
  SiteView& site(const json& request) {
    const std::string name = get_string(request, "site");
    for (auto& s : sites) {
      if (s->site.name == name) return *s;
    }
    std::string names;
    for (auto& s : sites) names += (names.empty() ? "" : ", ") + s->site.name;
    throw RequestError("site = \"" + name + "\": not a site of this ground; expected one of " +
                       names);
  }
  // Runs `call` on a worker and sends its reply (with the request's id) to `session`.
  void run(const std::shared_ptr<WsSession>& session, const json& id, Workers& pool,
           std::function<json()> call);
};

namespace {

AnyWebSocket make_websocket(AnyStream stream) {
  return std::visit(
      [](auto& s) -> AnyWebSocket {
        using Stream = std::decay_t<decltype(s)>;
        return AnyWebSocket(std::in_place_type<websocket::stream<Stream>>, std::move(s));
      },
      stream);
}

WsSession::WsSession(WebServer::Impl& server, AnyStream stream, std::uint64_t id, Person* person,
                     std::string login)
    : server_(server),
      ws_(make_websocket(std::move(stream))),
      person_(person),
      login_(std::move(login)),
      id_(id),
      sent_seq_(server.sites.size(), 0) {}

bool WsSession::due(Clock::time_point now) {
  if (!open_ || !subscribed_) return false;
  if (writing_) {
    if (now >= next_due_) {
      // The first period found busy is only late; each further one means the sample of
      // the period before was superseded unsent.
      if (late_) {
        ++dropped_;
        server_.skipped.fetch_add(1);
      }
      late_ = true;
      advance(now);
    }
    return false;
  }
  if (!late_ && now < next_due_) return false;
  late_ = false;
  advance(now);
  return true;
}

void WsSession::start(http::request<http::string_body> request) {
  // A small kernel send buffer (no autotuning up to megabytes): a browser that stops
  // reading shows as a busy socket within a few messages, and holds little memory.
  std::visit(
      [&](auto& ws) {
        beast::error_code ignored;
        beast::get_lowest_layer(ws).socket().set_option(
            net::socket_base::send_buffer_size(kSendBuffer), ignored);
        ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
        ws.read_message_max(WebServer::kMaxRequestBody);
      },
      ws_);
  const auto accepted = [self = shared_from_this()](beast::error_code error) {
    if (error) return self->fail();
    self->server_.clients.fetch_add(1);
    self->server_.sessions[self->id_] = self;
    self->reply(self->server_.hello(self->person_));
    for (const auto& s : self->server_.sites) {
      if (s->arm) {
        self->reply(arm_message(s->site.name, *s->arm, link_radii(s->task ? &*s->task : nullptr)));
      }
      self->reply(self->server_.site_message(*s));
    }
    // Telemetry flows at the default rate until the client subscribes at its own.
    self->set_rate(kDefaultTelemetryRate);
    self->read();
  };
  std::visit([&](auto& ws) { ws.async_accept(request, accepted); }, ws_);
}

void WsSession::read() {
  std::visit(
      [&](auto& ws) {
        ws.async_read(buffer_, [self = shared_from_this()](beast::error_code e, std::size_t n) {
          self->on_read(e, n);
        });
      },
      ws_);
}

void WsSession::on_read(beast::error_code error, std::size_t /*bytes*/) {
  if (error) return fail();
  const std::string text = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  handle(text);
  if (open_) read();
}

void WsSession::send(std::string text) {
  if (!open_) return;
  if (queue_.size() >= WebServer::kMaxQueuedMessages) {
    // A browser that stopped reading: its queue would grow without bound.
    close();
    return;
  }
  queued_bytes_ += text.size();
  server_.queued_bytes.fetch_add(text.size());
  queue_.push_back(std::move(text));
  if (!writing_) write();
}

void WsSession::offer_telemetry(std::size_t site, std::uint64_t seq, const std::string& message) {
  sent_seq_[site] = seq;
  // `message` is a JSON object: its closing brace gives way to this client's count.
  std::string text;
  text.reserve(message.size() + 32);
  text.append(message, 0, message.size() - 1);
  text += ",\"dropped\":";
  text += std::to_string(dropped_);
  text += '}';
  server_.sent.fetch_add(1);
  send(std::move(text));
}

void WsSession::write() {
  writing_ = true;
  std::visit(
      [&](auto& ws) {
        ws.text(true);
        ws.async_write(net::buffer(queue_.front()),
                       [self = shared_from_this()](beast::error_code e, std::size_t n) {
                         self->on_write(e, n);
                       });
      },
      ws_);
}

void WsSession::on_write(beast::error_code error, std::size_t /*bytes*/) {
  queued_bytes_ -= queue_.front().size();
  server_.queued_bytes.fetch_sub(queue_.front().size());
  queue_.pop_front();
  if (error) return fail();
  if (!queue_.empty() && open_) {
    write();
  } else {
    writing_ = false;
  }
}

void WsSession::close() {
  if (!open_) return;
  fail();
  std::visit(
      [](auto& ws) {
        beast::error_code ignored;
        beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
        beast::get_lowest_layer(ws).socket().close(ignored);
      },
      ws_);
}

void WsSession::fail() {
  if (!open_) return;
  open_ = false;
  if (server_.sessions.erase(id_) > 0) server_.clients.fetch_sub(1);
  server_.queued_bytes.fetch_sub(queued_bytes_);
  queued_bytes_ = 0;
  server_.release_teleop(id_, "socket closed");
}

// A camera view in the browser (/video?site=…&camera=…): a WebSocket of its own, never the
// console's control socket. It opens a CameraView of the site's camera through the client
// the request goes through, and forwards each frame as a binary message: a 56-byte header
// (version 2; flags: bit 0 key frame, bit 1 capture time known, bit 2 pose known; frame
// number u32; capture time f64 [ms since the Unix epoch, the ground's clock]; forwarded f64,
// same clock; the camera's position in BASE 3 × f32 [m] and orientation w, x, y, z 4 × f32),
// then the VP9 frame (PROTOCOL.md, /video). Text messages: "camera" (codec, size, rate) when the
// view opens, "camera_stats" each second, "camera_end" when the site ends it. A browser that falls
// behind loses frames up to the next key frame, which is then asked for: never a stale
// queue.
class VideoSession : public std::enable_shared_from_this<VideoSession> {
 public:
  VideoSession(WebServer::Impl& server, AnyStream stream, RemoteSiteClient* client,
               std::string site, std::string camera, bool eye)
      : eye_(eye),
        server_(server),
        ws_(make_websocket(std::move(stream))),
        client_(client),
        site_(std::move(site)),
        camera_(std::move(camera)),
        timer_(*server.ioc) {}

  void start(http::request<http::string_body> request) {
    std::visit(
        [&](auto& ws) {
          ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
          ws.read_message_max(4096);
        },
        ws_);
    std::visit(
        [&](auto& ws) {
          ws.async_accept(request, [self = shared_from_this()](beast::error_code error) {
            if (error) return;
            self->open();
          });
        },
        ws_);
  }

 private:
  struct Out {
    std::string bytes;
    bool binary = false;
    bool key = false;
  };

  void open() {
    std::weak_ptr<VideoSession> weak = shared_from_this();
    net::io_context& ioc = *server_.ioc;
    view_ = client_->watch_camera(
        camera_, 0,
        [weak, &ioc](const VideoFrame& frame) {
          net::post(ioc, [weak, frame] {
            if (auto self = weak.lock()) self->forward(frame);
          });
        },
        eye_);
    read();
    tick();
  }

  void read() {
    std::visit(
        [&](auto& ws) {
          ws.async_read(buffer_, [self = shared_from_this()](beast::error_code e, std::size_t) {
            self->buffer_.consume(self->buffer_.size());
            if (e) return self->end();
            self->read();  // the page says nothing here; reading notices its close
          });
        },
        ws_);
  }

  void tick() {
    timer_.expires_after(std::chrono::milliseconds(250));
    timer_.async_wait([self = shared_from_this()](beast::error_code e) {
      if (e || !self->open_) return;
      const CameraViewStats st = self->view_->stats();
      if (st.open) self->announce(st);
      if (st.ended && !self->ended_) {
        self->ended_ = true;
        self->queue(json{{"type", "camera_end"}, {"error", st.error}}.dump(), false, false);
      }
      if (++self->ticks_ % 4 == 0) {
        self->queue(json{{"type", "camera_stats"},
                         {"frames", st.frames},
                         {"lost", st.lost},
                         {"held_back", st.held_back},
                         {"repaired", st.repaired},
                         {"bytes", st.bytes},
                         {"key_requests", st.key_requests},
                         {"dropped_here", self->dropped_},
                         {"site_sent", st.sent},
                         {"encode_ms", st.encode_ms},
                         {"clock_known", st.clock_known},
                         {"clock_offset_ms", 1e-6 * static_cast<double>(st.clock_offset_ns)},
                         {"round_trip_ms", 1e-6 * static_cast<double>(st.round_trip_ns)}}
                        .dump(),
                    false, false);
      }
      self->tick();
    });
  }

  // The page configures its decoder from this, before the first frame.
  void announce(const CameraViewStats& st) {
    if (announced_) return;
    announced_ = true;
    queue(json{{"type", "camera"},
               {"site", site_},
               {"camera", camera_},
               {"codec", st.codec},
               {"width", st.camera.width},
               {"height", st.camera.height},
               {"frame_rate", st.camera.frame_rate}}
              .dump(),
          false, false);
  }

  void forward(const VideoFrame& frame) {
    if (!open_) return;
    announce(view_->stats());  // frames come only once the site answered
    if (awaiting_key_ && !frame.key) {
      ++dropped_;
      return;
    }
    awaiting_key_ = false;
    // The ground's monotonic instants on its wall clock, as the page's Date.now() counts.
    const double unix_ms =
        1e-3 * static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::int64_t now_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    const double capture_ms =
        frame.capture_ground_ns != 0
            ? unix_ms - 1e-6 * static_cast<double>(now_ns - frame.capture_ground_ns)
            : 0.0;
    constexpr std::size_t kHeader = 56;
    std::string bytes(kHeader + frame.data.size(), '\0');
    bytes[0] = 2;
    bytes[1] = static_cast<char>((frame.key ? 1 : 0) | (frame.capture_ground_ns != 0 ? 2 : 0) |
                                 (frame.pose_known ? 4 : 0));
    std::memcpy(bytes.data() + 4, &frame.number, 4);
    std::memcpy(bytes.data() + 8, &capture_ms, 8);
    std::memcpy(bytes.data() + 16, &unix_ms, 8);
    if (frame.pose_known) {
      const Eigen::Quaterniond q(frame.base_T_camera.R);
      const std::array<float, 7> pose{static_cast<float>(frame.base_T_camera.p.x()),
                                      static_cast<float>(frame.base_T_camera.p.y()),
                                      static_cast<float>(frame.base_T_camera.p.z()),
                                      static_cast<float>(q.w()),
                                      static_cast<float>(q.x()),
                                      static_cast<float>(q.y()),
                                      static_cast<float>(q.z())};
      std::memcpy(bytes.data() + 24, pose.data(), sizeof pose);
    }
    std::memcpy(bytes.data() + kHeader, frame.data.data(), frame.data.size());
    queue(std::move(bytes), true, frame.key);
  }

  void queue(std::string bytes, bool binary, bool key) {
    if (!open_) return;
    // More than a few frames waiting: the page cannot keep up. What waits is dropped up to
    // the next key frame (a delta without its predecessor would not decode).
    std::size_t frames = 0;
    for (const Out& o : queue_) frames += o.binary ? 1 : 0;
    if (binary && frames >= 3 && !key) {
      ++dropped_;
      awaiting_key_ = true;
      for (auto it = queue_.begin() + (writing_ ? 1 : 0); it != queue_.end();) {
        it = it->binary ? queue_.erase(it) : it + 1;
      }
      view_->request_key_frame();
      return;
    }
    queue_.push_back(Out{std::move(bytes), binary, key});
    if (!writing_) write();
  }

  void write() {
    writing_ = true;
    std::visit(
        [&](auto& ws) {
          ws.binary(queue_.front().binary);
          ws.async_write(net::buffer(queue_.front().bytes),
                         [self = shared_from_this()](beast::error_code e, std::size_t) {
                           self->queue_.pop_front();
                           if (e) return self->end();
                           if (!self->queue_.empty() && self->open_) {
                             self->write();
                           } else {
                             self->writing_ = false;
                           }
                         });
        },
        ws_);
  }

  void end() {
    if (!open_) return;
    open_ = false;
    timer_.cancel();
    view_.reset();  // ends the call to the site and its receiving
  }

  bool eye_;  // the view sets camera mode's EYE frame (WatchCameraRequest.eye)
  WebServer::Impl& server_;
  AnyWebSocket ws_;
  RemoteSiteClient* client_;
  std::string site_;
  std::string camera_;
  net::steady_timer timer_;
  std::unique_ptr<CameraView> view_;
  beast::flat_buffer buffer_;
  std::deque<Out> queue_;
  bool writing_ = false;
  bool open_ = true;
  bool announced_ = false;
  bool ended_ = false;
  bool awaiting_key_ = false;
  std::uint64_t dropped_ = 0;
  std::uint64_t ticks_ = 0;
};

void WsSession::handle(const std::string& text) {
  // A logged-out or expired login ends its sockets too; each message keeps it alive.
  if (!login_.empty() && !server_.logins.find(login_)) {
    close();
    return;
  }
  const json request = json::parse(text, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    reply(error_reply(nullptr, "message: not a JSON object (" + std::to_string(text.size()) +
                                   " bytes); see local_site/web/PROTOCOL.md"));
    return;
  }
  const json id = request.contains("id") ? request["id"] : json(nullptr);
  try {
    dispatch(request);
  } catch (const RequestError& e) {
    reply(error_reply(id, e.what()));
  } catch (const std::exception& e) {
    reply(error_reply(id, e.what()));
  }
}

void WsSession::dispatch(const json& request) {
  const std::string type = get_string(request, "type");
  const json id = request.contains("id") ? request["id"] : json(nullptr);
  WebGamepad* gamepad = server_.options.gamepad.get();
  // Messages without a reply: they come at 10–125 Hz.
  if (type == "heartbeat") {
    if (gamepad != nullptr && gamepad->holder() == id_) gamepad->heartbeat();
    return;
  }
  if (type == "visibility") {
    if (get_bool(request, "hidden")) server_.release_teleop(id_, "page hidden");
    return;
  }
  if (type == "gamepad") {
    if (gamepad == nullptr || gamepad->holder() != id_) return;  // not holding: ignored
    const auto axes = request.find("axes");
    std::array<double, 6> a{};
    if (axes == request.end() || !axes->is_array() || axes->size() != 6) {
      throw RequestError("axes: expected 6 numbers in [-1, 1] (vx, vy, vz, wx, wy, wz)");
    }
    for (std::size_t i = 0; i < 6; ++i) {
      const json& v = (*axes)[i];
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        throw RequestError("axes[" + std::to_string(i) + "] = " + v.dump() +
                           ": expected a number in [-1, 1]");
      }
      a[i] = v.get<double>();
    }
    gamepad->set(a, get_bool(request, "enable", false));
    return;
  }
  if (!id.is_number_integer()) {
    throw RequestError("id = " + id.dump() + ": every request carries an integer id");
  }
  if (type == "subscribe") {
    const double hz = get_number(request, "rate_hz", kMinTelemetryRate, kMaxTelemetryRate);
    set_rate(hz);
    reply({{"type", "reply"}, {"id", id}, {"ok", true}, {"rate_hz", hz}});
    return;
  }
  if (type == "stop") {
    // STOP first releases the browser's enable, at once, then stops the arm(s): no lease
    // is needed, and it runs on a thread of its own.
    server_.release_teleop(0, "stop");
    std::vector<SiteView*> targets;
    if (request.contains("site")) {
      targets.push_back(&server_.site(request));
    } else {
      for (auto& s : server_.sites) targets.push_back(s.get());
    }
    std::vector<RemoteSiteClient*> clients;
    clients.reserve(targets.size());
    for (SiteView* s : targets) clients.push_back(client(*s));
    server_.run(shared_from_this(), id, *server_.stopper, [targets, clients, id] {
      json states = json::object();
      std::string failed;
      for (std::size_t i = 0; i < targets.size(); ++i) {
        SiteView* s = targets[i];
        try {
          states[s->site.name] = state_name(clients[i]->stop());
        } catch (const RemoteError& e) {
          failed += (failed.empty() ? "" : "; ") + std::string(e.what());
        }
      }
      if (!failed.empty()) return error_reply(id, failed);
      return json{{"type", "reply"}, {"id", id}, {"ok", true}, {"states", states}};
    });
    return;
  }
  if (type == "teleop") {
    if (gamepad == nullptr) {
      throw RequestError("teleop: tether-ground runs the hand controller '" +
                         server_.options.device +
                         "'; start it with --device web to teleoperate from the browser");
    }
    const std::string site = get_string(request, "site");
    if (site != server_.options.teleop_site) {
      throw RequestError("site = \"" + site + "\": tether-ground teleoperates \"" +
                         server_.options.teleop_site + "\"");
    }
    const bool enable = get_bool(request, "enable");
    std::string mode_name;
    if (request.contains("mode")) {
      mode_name = get_string(request, "mode");
      const auto mode = teleop_mode_from_name(mode_name);
      if (!mode) {
        throw RequestError("mode = \"" + mode_name + "\": expected tool, world or camera");
      }
      // Taken by the hand controller once the enable is off (OperatorInput), so a switch
      // never jumps the arm mid-motion.
      if (enable) gamepad->request_mode(*mode);
    }
    if (enable && person_ != nullptr) {
      // No control without the lease: the teleoperation stream goes out under the person's
      // own certificate, and the site takes increments only from its lease holder.
      const SiteView& teleop = server_.site(request);
      if (teleop.lease_holder != person_->user.name) {
        throw RequestError("enable = true: teleoperating " + site + " needs its control lease, " +
                           (teleop.lease_holder.empty() ? std::string("which nobody holds")
                                                        : "held by '" + teleop.lease_holder + "'") +
                           "; take the lease first");
      }
    }
    if (enable) {
      const std::uint64_t holder = gamepad->holder();
      if (holder != 0 && holder != id_) {
        throw RequestError("enable = true: another browser session holds teleoperation");
      }
      gamepad->hold(id_);
      {
        std::lock_guard lock(server_.teleop_mutex);
        server_.teleop_person = person_ != nullptr ? person_->user.name : std::string();
      }
      server_.broadcast(json{
          {"type", "teleop"},
          {"site", site},
          {"enabled", true},
          {"mode", mode_name},
          {"reason", ""}}.dump());
    } else {
      server_.release_teleop(id_, "released");
    }
    reply({{"type", "reply"}, {"id", id}, {"ok", true}, {"enabled", enable}});
    return;
  }
  if (in_flight_ >= WebServer::kMaxInFlightRequests) {
    throw RequestError("id = " + id.dump() + ": " + std::to_string(in_flight_) +
                       " requests of this client are still running; at most " +
                       std::to_string(WebServer::kMaxInFlightRequests));
  }
  const auto ok = [id](json fields) {
    fields["type"] = "reply";
    fields["id"] = id;
    fields["ok"] = true;
    return fields;
  };
  Workers& pool = *server_.workers;
  auto self = shared_from_this();
  if (type == "validate") {
    std::string arm = "iiwa7";
    // A preview meets what the site's arm meets: the site's scene unless the page names one.
    std::string scene = "free";
    if (request.contains("site")) {
      const SiteView& view = server_.site(request);
      arm = view.site.arm;
      if (remote::scene_from_name(view.scene_name)) scene = view.scene_name;
    }
    if (request.contains("arm")) arm = get_string(request, "arm");
    const std::string text = get_string(request, "text");
    const bool preview = get_bool(request, "preview", true);
    if (request.contains("scene")) scene = get_string(request, "scene");
    server_.run(self, id, pool, [=] {
      std::vector<FieldError> errors;
      const auto task = parse_and_validate(text, arm, errors);
      if (!task) {
        json r = error_reply(id, "task is invalid (" + std::to_string(errors.size()) +
                                     (errors.size() == 1 ? " problem" : " problems") + ")");
        r["errors"] = to_json(errors);
        return r;
      }
      json r = ok({{"arm", arm}, {"scene", scene}});
      if (preview) {
        PreviewOptions options;
        options.arm = arm;
        options.scene = scene;
        const PreviewReport report = preview_task(*task, options);
        r["preview"] = {
            {"text", format_preview(report)},
            {"breach", report.breach ? json(report.breach->description) : json(nullptr)},
            {"peak_force", report.peak_force},
            {"peak_torque", report.peak_torque}};
      }
      return r;
    });
    return;
  }
  if (type == "commands") {
    server_.run(self, id, pool, [=] {
      const CommandLibrary library = CommandLibrary::load(default_commands_directory());
      json commands = json::array();
      for (const TaskCommand& c : library.commands()) {
        json arguments = json::array();
        for (const CommandArgument& a : c.arguments) {
          json choices = json::array();
          for (const ArgumentChoice& choice : a.choices) {
            choices.push_back({{"name", choice.name}, {"help", choice.help}});
          }
          arguments.push_back({{"name", a.name},
                               {"help", a.help},
                               {"unit", a.unit},
                               {"kind", a.kind == ArgumentKind::kNumber ? "number" : "choice"},
                               {"allowed", a.allowed()},
                               {"default", a.default_text()},
                               {"required", a.required()},
                               {"min", a.min},
                               {"max", a.max},
                               {"choices", choices}});
        }
        commands.push_back({{"name", c.name},
                            {"summary", c.summary},
                            {"scene", c.scene},
                            {"arguments", arguments}});
      }
      return ok({{"commands", commands}});
    });
    return;
  }
  if (type == "library") {
    server_.run(self, id, pool, [=] {
      return ok({{"tasks", task_library(default_tasks_directory())}});
    });
    return;
  }
  if (type == "command") {
    // The set `tether do COMMAND --ARG VALUE ...` would build, for the site's arm (else
    // `arm`, else iiwa7); nothing is uploaded.
    const std::string name = get_string(request, "command");
    std::string arm = "iiwa7";
    if (request.contains("site")) arm = server_.site(request).site.arm;
    if (request.contains("arm")) arm = get_string(request, "arm");
    ArgumentValues arguments;
    if (const auto given = request.find("arguments"); given != request.end()) {
      if (!given->is_object()) {
        throw RequestError("arguments = " + quoted(*given) +
                           ": expected an object of argument name to value, e.g. "
                           "{\"angle\": \"60\"}");
      }
      for (const auto& [key, value] : given->items()) {
        if (!value.is_string() && !value.is_number()) {
          throw RequestError("arguments." + key + " = " + quoted(value) +
                             ": expected the value as text or a number");
        }
        arguments[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
    server_.run(self, id, pool, [=] {
      const CommandLibrary library = CommandLibrary::load(default_commands_directory());
      const TaskCommand* command = library.find(name);
      if (command == nullptr) {
        const std::string why =
            "command = \"" + name + "\": no such task command; expected one of " + library.names();
        json r = error_reply(id, why);
        r["errors"] = to_json({{"command", why}});
        return r;
      }
      try {
        return ok(command_task(*command, arguments, arm));
      } catch (const CommandArgumentError& e) {
        json r = error_reply(id, e.what());
        r["errors"] = to_json({{"arguments." + e.argument(), e.what()}});
        return r;
      }
    });
    return;
  }
  // The rest call one site.
  SiteView& s = server_.site(request);
  RemoteSiteClient* client = this->client(s);
  if (type == "start") {
    const std::string task = get_string(request, "task");
    server_.run(self, id, pool, [=] { return ok({{"task_id", client->start(task)}}); });
  } else if (type == "reset") {
    server_.run(self, id, pool, [=] {
      const ResetResult r = client->reset();
      if (!r.accepted) return error_reply(id, "reset refused: " + r.message);
      return ok({{"message", r.message}});
    });
  } else if (type == "recover") {
    // A joint jog (joint 1-7, signed distance [rad]) or, without a joint, a retreat along
    // the breached quantity's gradient; the site checks the direction against the breach.
    RecoveryMotion motion;
    motion.joint = static_cast<int>(get_number(request, "joint", 0.0, kArmDof, 0.0));
    motion.distance = get_number(request, "distance", -0.5, 0.5);
    motion.speed = get_number(request, "speed", 0.0, 1.0, 0.0);
    server_.run(self, id, pool, [=] {
      const RecoveryStatus r = client->recover(motion);
      return ok({{"motion", r.motion}, {"outcome", r.outcome}});
    });
  } else if (type == "aim") {
    // The pan-tilt head carrying a camera: absolute angles [deg]; the site checks the ranges
    // and that the camera is on the head.
    const std::string camera = get_string(request, "camera");
    const double pan = get_number(request, "pan_deg", -90.0, 90.0);
    const double tilt = get_number(request, "tilt_deg", -45.0, 45.0);
    server_.run(self, id, pool, [=] {
      client->aim_camera(camera, pan, tilt);
      return ok({{"pan_deg", pan}, {"tilt_deg", tilt}});
    });
  } else if (type == "list_tasks") {
    server_.run(self, id, pool, [=] {
      json tasks = json::array();
      for (const TaskSummary& t : client->list()) tasks.push_back(summary_json(t));
      return ok({{"tasks", tasks}});
    });
  } else if (type == "get_task") {
    const std::string task = get_string(request, "task");
    server_.run(self, id, pool, [=] {
      const auto [summary, parameters] = client->get(task);
      return ok({{"task", summary_json(summary)}, {"text", proto::to_text(parameters)}});
    });
  } else if (type == "upload") {
    const std::string task = get_string(request, "task");
    const std::string text = get_string(request, "text");
    const bool replace = get_bool(request, "replace", false);
    const std::string arm = s.site.arm;
    server_.run(self, id, pool, [=] {
      std::vector<FieldError> errors;
      auto parameters = parse_and_validate(text, arm, errors);
      if (!parameters) {
        json r = error_reply(id, "task is invalid (" + std::to_string(errors.size()) +
                                     (errors.size() == 1 ? " problem" : " problems") + ")");
        r["errors"] = to_json(errors);
        return r;
      }
      parameters->name = task;
      const UploadResult u = client->upload(task, *parameters, replace);
      return ok({{"task", u.name}, {"revision", u.revision}});
    });
  } else if (type == "diff") {
    const std::string task = get_string(request, "task");
    const std::string text = get_string(request, "text");
    server_.run(self, id, pool, [=] {
      TaskParameters proposed;
      try {
        proposed = proto::parse_task_text(text, "task");
      } catch (const proto::ConversionError& e) {
        json r = error_reply(id, e.what());
        r["errors"] = to_json({field_error_of(e)});
        return r;
      }
      const TaskParameters stored = client->get(task).second;
      json diff = json::array();
      for (const proto::TaskDifference& d : proto::diff_tasks(stored, proposed)) {
        diff.push_back({{"field", d.path.to_string()}, {"old", d.from}, {"new", d.to}});
      }
      return ok({{"diff", diff}});
    });
  } else if (type == "set_parameter") {
    const std::string path = get_string(request, "path");
    const auto value = request.find("value");
    if (value == request.end() || !(value->is_string() || value->is_number())) {
      throw RequestError(
          "value: expected the field's value in protobuf text format, e.g. "
          "\"300\"");
    }
    const std::string text = value->is_string() ? value->get<std::string>() : value->dump();
    server_.run(self, id, pool, [=] {
      return ok({{"task_id", client->set_parameter(path, text)}});
    });
  } else if (type == "audit") {
    const auto first = static_cast<std::uint64_t>(get_number(request, "first", 0.0, 1e15, 0.0));
    const auto max = static_cast<std::uint32_t>(get_number(request, "max", 1.0, 1000.0, 200.0));
    const std::string name = s.site.name;
    server_.run(self, id, pool, [=] {
      std::uint64_t next = 0;
      const std::vector<std::string> lines = client->audit(first, max, next);
      return ok({{"site", name}, {"lines", lines}, {"next", next}});
    });
  } else if (type == "lease") {
    const bool acquire = get_bool(request, "acquire");
    const bool force = get_bool(request, "force", false);
    server_.run(self, id, pool, [=] {
      if (acquire) return ok({{"lease_holder", client->acquire_control(force)}});
      client->release_control();
      return ok({{"lease_holder", ""}});
    });
  } else {
    throw RequestError("type = \"" + type +
                       "\": unknown; expected subscribe, stop, start, reset, recover, list_tasks, "
                       "get_task, validate, upload, diff, set_parameter, commands, library, "
                       "command, audit, lease, teleop, gamepad, heartbeat or visibility");
  }
}

// An HTTP connection: static files, the health check, logins, and the upgrade to /ws.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(WebServer::Impl& server, tcp::socket socket)
      : server_(server), stream_(make_stream(server, std::move(socket))) {}
  // Under HTTPS the TLS handshake comes first.
  void start() {
    auto* tls = std::get_if<TlsStream>(&stream_);
    if (tls == nullptr) return read();
    beast::get_lowest_layer(*tls).expires_after(kHttpTimeout);
    tls->async_handshake(net::ssl::stream_base::server,
                         [self = shared_from_this()](beast::error_code e) {
                           if (!e) self->read();
                         });
  }

 private:
  static AnyStream make_stream(WebServer::Impl& server, tcp::socket socket) {
    if (server.tls) return AnyStream(std::in_place_type<TlsStream>, std::move(socket), *server.tls);
    return AnyStream(std::in_place_type<PlainStream>, std::move(socket));
  }
  void read() {
    parser_.emplace();
    parser_->body_limit(WebServer::kMaxRequestBody);
    std::visit(
        [&](auto& stream) {
          beast::get_lowest_layer(stream).expires_after(kHttpTimeout);
          http::async_read(
              stream, buffer_, *parser_,
              [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_read(e); });
        },
        stream_);
  }
  void on_read(beast::error_code error);
  void api(const http::request<http::string_body>& request, const std::string& path);
  void login(const http::request<http::string_body>& request);
  template <class Body>
  void respond(http::response<Body> response) {
    response.set(http::field::server, "tether-ground");
    // The console must not be framed by another page (clicks on STOP or the enable
    // through an invisible frame) nor have its files sniffed as another type.
    response.set(http::field::x_frame_options, "DENY");
    response.set("Content-Security-Policy", "frame-ancestors 'none'");
    response.set("X-Content-Type-Options", "nosniff");
    if (server_.tls) response.set(http::field::strict_transport_security, "max-age=31536000");
    auto shared = std::make_shared<http::response<Body>>(std::move(response));
    std::visit(
        [&](auto& stream) {
          http::async_write(stream, *shared,
                            [self = shared_from_this(), shared](beast::error_code e, std::size_t) {
                              if (e || !shared->keep_alive()) return self->shutdown();
                              self->read();
                            });
        },
        stream_);
  }
  void shutdown() {
    std::visit(
        [](auto& stream) {
          beast::error_code ignored;
          beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
        },
        stream_);
  }
  // `cookie`: a Set-Cookie value to send with it.
  void text(http::status status, const std::string& body, const char* type,
            const std::string& cookie = "") {
    http::response<http::string_body> r{status, request_version_};
    r.set(http::field::content_type, type);
    r.set(http::field::cache_control, "no-store");
    if (!cookie.empty()) r.set(http::field::set_cookie, cookie);
    r.keep_alive(keep_alive_);
    r.body() = body;
    r.prepare_payload();
    respond(std::move(r));
  }
  void json_reply(http::status status, const json& body, const std::string& cookie = "") {
    text(status, body.dump(), "application/json", cookie);
  }
  std::string cookie(const std::string& token, bool clear) const {
    return std::string(kSessionCookie) + "=" + (clear ? "" : token) +
           "; Path=/; HttpOnly; SameSite=Strict" + (server_.tls ? "; Secure" : "") +
           (clear ? "; Max-Age=0" : "");
  }

  WebServer::Impl& server_;
  AnyStream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned request_version_ = 11;
  bool keep_alive_ = false;
};

// The value of query parameter `name` in "a=1&csrf=ab" ("" when absent). Tokens are hex, so
// no percent-decoding is needed.
std::string query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
  }
  return {};
}

// The name in a Host header: "127.0.0.1:8080" → 127.0.0.1, "[::1]:8080" → ::1.
std::string host_name(std::string_view host) {
  if (host.starts_with('[')) {
    const auto end = host.find(']');
    return std::string(host.substr(1, end == std::string_view::npos ? end : end - 1));
  }
  return std::string(host.substr(0, host.rfind(':')));
}

void HttpSession::on_read(beast::error_code error) {
  if (error) return;
  http::request<http::string_body> request = parser_->release();
  request_version_ = request.version();
  keep_alive_ = request.keep_alive();
  const std::string target(request.target());
  const auto question = target.find('?');
  const std::string path = target.substr(0, question);
  const std::string query = question == std::string::npos ? "" : target.substr(question + 1);
  const std::string origin(request[http::field::origin]);
  const std::string host(request[http::field::host]);
  // Browsers send Origin with every WebSocket upgrade and POST; a page from another site
  // carries its own and is refused (cross-site WebSocket hijacking, login CSRF).
  const bool foreign = !origin.empty() && origin != server_.own_origin(host);
  // Without logins nothing but the address keeps other pages out, and a page whose own
  // name was rebound to 127.0.0.1 (DNS rebinding) would pass the Origin check with its
  // own Host: so the Host must name loopback too.
  if (!server_.logins_on() && !is_loopback_host(host_name(host))) {
    return text(http::status::forbidden,
                "Host " + host + " is not a loopback name (127.0.0.1, ::1, localhost)\n",
                "text/plain");
  }
  if (websocket::is_upgrade(request)) {
    if (path != "/ws" && path != "/video") {
      return text(http::status::not_found, "no WebSocket here; use /ws (or /video)\n",
                  "text/plain");
    }
    if (foreign) {
      return text(http::status::forbidden,
                  "Origin " + origin + " is not this console (" + server_.own_origin(host) + ")\n",
                  "text/plain");
    }
    Person* person = nullptr;
    std::string token;
    if (server_.logins_on()) {
      token = cookie_value(std::string(request[http::field::cookie]), kSessionCookie);
      const auto login = server_.logins.find(token);
      if (!login) {
        return text(http::status::unauthorized, "not logged in: POST /api/login first\n",
                    "text/plain");
      }
      if (query_value(query, "csrf") != login->csrf) {
        return text(http::status::forbidden,
                    "csrf: missing or not this login's token (/ws?csrf=TOKEN, from the "
                    "login's reply)\n",
                    "text/plain");
      }
      person = server_.person(login->user);
    }
    std::visit([](auto& s) { beast::get_lowest_layer(s).expires_never(); }, stream_);
    if (path == "/video") {
      const std::string site = query_value(query, "site");
      const std::string camera = query_value(query, "camera");
      const std::string eye = query_value(query, "eye");
      if (!eye.empty() && eye != "0" && eye != "1") {
        return text(http::status::bad_request, "/video: eye = '" + eye + "': 0 or 1\n",
                    "text/plain");
      }
      SiteView* view = nullptr;
      for (auto& s : server_.sites) {
        if (s->site.name == site) view = s.get();
      }
      if (view == nullptr || camera.empty()) {
        return text(http::status::bad_request,
                    "/video needs site (a site of this ground) and camera (one of its "
                    "scene's cameras)\n",
                    "text/plain");
      }
      // The person's own client (their certificate: the site sees and audits them), else
      // the ground's.
      RemoteSiteClient* client =
          person != nullptr ? person->clients[view->index].get() : view->site.client;
      std::make_shared<VideoSession>(server_, std::move(stream_), client, site, camera, eye == "1")
          ->start(std::move(request));
      return;
    }
    auto session = std::make_shared<WsSession>(server_, std::move(stream_), server_.next_session++,
                                               person, std::move(token));
    session->start(std::move(request));
    return;
  }
  if (path.starts_with("/api/")) {
    if (foreign) {
      return json_reply(http::status::forbidden,
                        json{{"error", "Origin " + origin + " is not this console"}});
    }
    return api(request, path);
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    return text(http::status::method_not_allowed, "GET or HEAD only\n", "text/plain");
  }
  const auto file_path = static_file_path(server_.options.root, path);
  if (!file_path) {
    return text(http::status::bad_request, "refused path: " + target + "\n", "text/plain");
  }
  beast::error_code open_error;
  http::file_body::value_type file;
  file.open(file_path->c_str(), beast::file_mode::scan, open_error);
  if (open_error) {
    return text(http::status::not_found, "not found: " + target + "\n", "text/plain");
  }
  const auto size = file.size();
  if (request.method() == http::verb::head) {
    http::response<http::empty_body> r{http::status::ok, request_version_};
    r.set(http::field::content_type, std::string(mime_type(file_path->string())));
    r.content_length(size);
    r.keep_alive(keep_alive_);
    return respond(std::move(r));
  }
  http::response<http::file_body> r{std::piecewise_construct, std::make_tuple(std::move(file)),
                                    std::make_tuple(http::status::ok, request_version_)};
  r.set(http::field::content_type, std::string(mime_type(file_path->string())));
  // The page is rebuilt in place: let the browser revalidate it; vite's assets carry a
  // content hash in their names.
  r.set(http::field::cache_control, "no-cache");
  r.content_length(size);
  r.keep_alive(keep_alive_);
  respond(std::move(r));
}

void HttpSession::api(const http::request<http::string_body>& request, const std::string& path) {
  const bool get = request.method() == http::verb::get;
  const bool post = request.method() == http::verb::post;
  if (path == "/api/health" && get)
    return text(http::status::ok, "{\"ok\":true}", "application/json");
  if (path == "/api/session" && get) {
    if (!server_.logins_on()) {
      return json_reply(http::status::ok, json{{"logins", false}, {"user", nullptr}, {"csrf", ""}});
    }
    const auto login = server_.logins.find(
        cookie_value(std::string(request[http::field::cookie]), kSessionCookie));
    if (!login) {
      return json_reply(http::status::unauthorized,
                        json{{"logins", true}, {"error", "not logged in"}});
    }
    return json_reply(http::status::ok,
                      json{{"logins", true}, {"user", login->user}, {"csrf", login->csrf}});
  }
  if (path == "/api/login" && post) return login(request);
  if (path == "/api/logout" && post) {
    const std::string token =
        cookie_value(std::string(request[http::field::cookie]), kSessionCookie);
    const auto login = server_.logins.find(token);
    if (!login) {
      return json_reply(http::status::unauthorized, json{{"error", "not logged in"}});
    }
    if (std::string(request["X-CSRF-Token"]) != login->csrf) {
      return json_reply(http::status::forbidden,
                        json{{"error", "X-CSRF-Token: missing or not this login's token"}});
    }
    server_.logins.close(token);
    server_.close_login(token);
    return json_reply(http::status::ok, json{{"ok", true}}, cookie("", true));
  }
  return json_reply(http::status::not_found,
                    json{{"error", std::string(request.method_string()) + " " + path +
                                       ": expected GET /api/health, GET /api/session, POST "
                                       "/api/login or POST /api/logout"}});
}

void HttpSession::login(const http::request<http::string_body>& request) {
  if (!server_.logins_on()) {
    return json_reply(http::status::not_found,
                      json{{"error", "logins are off: tether-ground runs without --web-users"}});
  }
  // A form on another site cannot send JSON without a CORS preflight, which this server
  // never grants: a cross-site page cannot log the operator in under another name.
  const std::string type(request[http::field::content_type]);
  if (!type.starts_with("application/json")) {
    return json_reply(http::status::unsupported_media_type,
                      json{{"error", "Content-Type: expected application/json"}});
  }
  const json body = json::parse(request.body(), nullptr, false);
  const auto field = [&](const char* name) -> std::optional<std::string> {
    if (!body.is_object() || !body.contains(name) || !body[name].is_string()) return {};
    return body[name].get<std::string>();
  };
  const auto user = field("user");
  const auto password = field("password");
  if (!user || !password || user->size() > 64 || password->size() > 1024) {
    return json_reply(http::status::bad_request,
                      json{{"error",
                            "expected {\"user\": name (at most 64 characters), "
                            "\"password\": text (at most 1024)}"}});
  }
  const Person* person = server_.person(*user);
  if (person != nullptr) {
    if (const int wait = server_.logins.locked_for(*user); wait > 0) {
      return json_reply(http::status::too_many_requests,
                        json{{"error", "too many failed logins for '" + *user + "': try again in " +
                                           std::to_string(wait) + " s"}});
    }
  }
  // PBKDF2 takes a good fraction of a second: on a thread of its own, never the server's.
  // An unknown name is checked against a hash too, so the time does not tell names apart.
  const std::string hash = person != nullptr ? person->user.password_hash
                                             : server_.people.begin()->second->user.password_hash;
  server_.checker->post([self = shared_from_this(), user = *user, password = *password, hash,
                         known = person != nullptr] {
    const bool ok = verify_password(password, hash) && known;
    net::post(*self->server_.ioc, [self, user, ok, known] {
      if (!ok) {
        if (known) self->server_.logins.failed(user);
        return self->json_reply(http::status::unauthorized,
                                json{{"error", "wrong user or password"}});
      }
      self->server_.logins.succeeded(user);
      const LoginTable::Login login = self->server_.logins.open(user);
      self->json_reply(http::status::ok, json{{"user", user}, {"csrf", login.csrf}},
                       self->cookie(login.token, false));
    });
  });
}

}  // namespace

void WebServer::Impl::run(const std::shared_ptr<WsSession>& session, const json& id, Workers& pool,
                          std::function<json()> call) {
  std::weak_ptr<WsSession> weak = session;
  // Counted while in flight; the reply is posted back to the server thread.
  session->request_started();
  pool.post([this, weak, id, call = std::move(call)] {
    json reply;
    try {
      reply = call();
    } catch (const RemoteError& e) {
      reply = error_reply(id, e.what());
      reply["code"] = e.code_name();
      if (e.code() == RemoteCode::kInvalidArgument) {
        reply["errors"] = to_json(field_errors_of(e.message()));
      }
    } catch (const TaskValidationError& e) {
      std::vector<FieldError> errors;
      for (const ValidationIssue& issue : e.issues())
        errors.push_back({issue.field, issue.message});
      reply = error_reply(id, e.what());
      reply["errors"] = to_json(errors);
    } catch (const std::exception& e) {
      reply = error_reply(id, e.what());
    }
    net::post(*ioc, [weak, text = reply.dump()]() mutable {
      if (auto s = weak.lock()) {
        s->request_done();
        s->send(std::move(text));
      }
    });
  });
}

json WebServer::Impl::hello(const Person* person) const {
  json sites_json = json::array();
  for (const auto& s : sites) {
    sites_json.push_back(
        {{"name", s->site.name}, {"address", s->site.address}, {"arm", s->site.arm}});
  }
  return {{"type", "hello"},
          {"version", kProtocolVersion},
          {"operator", person != nullptr ? person->user.name : options.operator_name},
          {"logins", logins_on()},
          {"sites", sites_json},
          {"teleop_site", options.teleop_site},
          {"teleop_device", options.device},
          {"telemetry_hz", kDefaultTelemetryRate}};
}

json WebServer::Impl::site_message(const SiteView& s) const {
  json m = {
      {"type", "site"},
      {"name", s.site.name},
      {"address", s.site.address},
      {"connected", s.connected},
      {"state", state_name(s.state)},
      {"breach",
       {{"cause", s.breach ? to_string(s.breach.cause) : ""}, {"detail", s.breach.description}}},
      {"lease_holder", s.lease_holder},
      {"link_rtt_ms", s.rtt_ms >= 0.0 ? json(s.rtt_ms) : json(nullptr)},
      {"task", {{"name", s.task_name}, {"id", s.task_id}}},
      {"error", s.error},
      // The page shows how old lease_holder, link_rtt_ms and the rest are.
      {"polled_unix_ms", s.polled_unix_ms != 0 ? json(s.polled_unix_ms) : json(nullptr)},
      // What the site's arm works in, for the 3-D view; null until a site reports one.
      {"scene", s.scene.name.empty() ? json(nullptr) : scene_json(s.scene)}};
  return m;
}

void WebServer::Impl::fetch_task(SiteView& s) {
  s.task_fetched_for = s.task_id;
  const std::string name = s.task_name;
  const std::uint64_t task_id = s.task_id;
  RemoteSiteClient* client = s.site.client;
  SiteView* view = &s;
  workers->post([this, view, client, name, task_id] {
    std::optional<TaskParameters> task;
    try {
      task = client->get(name).second;
    } catch (const std::exception&) {
      // Replaced or deleted since it started: the view goes without its obstacles and
      // bounds until the next task.
      return;
    }
    net::post(*ioc, [this, view, task = std::move(task), task_id]() mutable {
      if (view->task_id != task_id) return;
      view->task = std::move(task);
      view->message.reset();
      if (view->arm) {
        broadcast(arm_message(view->site.name, *view->arm, link_radii(&*view->task)).dump());
      }
    });
  });
}

void WebServer::Impl::take_samples() {
  for (auto& s : sites) {
    if (!s->slot.take()) continue;
    ++s->seq;
    s->message.reset();
    const TelemetrySample& sample = s->slot.front().telemetry;
    const bool changed =
        sample.state != s->state || sample.task_id != s->task_id || !(sample.breach == s->breach);
    // The site stopped by itself (a breach, another operator's stop) under the browser's
    // teleoperation: the enable goes at once, with the site's reason, as it does for the
    // page's own STOP (which released it already, with "stop").
    const bool left_running =
        s->state == ExecutorState::kRunning &&
        (sample.state == ExecutorState::kStopping || sample.state == ExecutorState::kStopped);
    const bool new_breach = sample.breach && !(sample.breach == s->breach);
    if ((left_running || new_breach) && s->site.name == options.teleop_site && options.gamepad &&
        options.gamepad->holder() != 0) {
      release_teleop(0, sample.breach
                            ? "the site stopped: " + std::string(to_string(sample.breach.cause)) +
                                  ": " + sample.breach.description
                            : std::string("the site stopped"));
    }
    s->state = sample.state;
    s->breach = sample.breach;
    if (sample.task_id != s->task_id) s->task.reset();
    s->task_id = sample.task_id;
    s->task_name = sample.task_name;
    s->connected = true;
    if (changed) broadcast(site_message(*s).dump());
    if (!s->task_name.empty() && s->task_fetched_for != s->task_id) fetch_task(*s);
  }
}

void WebServer::Impl::tick() {
  take_samples();
  const auto now = Clock::now();
  for (auto it = sessions.begin(); it != sessions.end();) {
    auto session = it->second.lock();
    ++it;  // the session may leave the map below
    if (!session || !session->due(now)) continue;
    for (std::size_t i = 0; i < sites.size(); ++i) {
      SiteView& s = *sites[i];
      if (s.seq == 0 || session->sent_seq(i) == s.seq) continue;
      if (!s.message || s.message_seq != s.seq) {
        const SiteView::Sample& sample = s.slot.front();
        s.message = telemetry_message(s.site.name, sample.telemetry, s.arm.get(),
                                      s.task ? &*s.task : nullptr, s.rtt_ms,
                                      sample.has_predicted ? &sample.predicted : nullptr,
                                      s.scene.name.empty() ? nullptr : &s.scene)
                        .dump();
        s.message_seq = s.seq;
      }
      session->offer_telemetry(i, s.seq, *s.message);
    }
  }
  // The heartbeat: the device releases the enable by itself; this tells the browsers.
  if (options.gamepad && options.gamepad->holder() != 0) {
    const std::int64_t age = WebGamepad::now_ns() - options.gamepad->last_heartbeat_ns();
    if (age >= std::chrono::duration_cast<std::chrono::nanoseconds>(WebGamepad::kHeartbeatTimeout)
                   .count()) {
      release_teleop(0, "heartbeat");
    }
  }
  timer->expires_after(kTick);
  timer->async_wait([this](beast::error_code e) {
    if (!e) tick();
  });
}

void WebServer::Impl::accept() {
  acceptor->async_accept(*ioc, [this](beast::error_code error, tcp::socket socket) {
    if (error == net::error::operation_aborted) return;
    if (!error) std::make_shared<HttpSession>(*this, std::move(socket))->start();
    accept();
  });
}

void WebServer::Impl::poll_site(SiteView& s) {
  for (;;) {
    {
      {
        std::lock_guard lock(poller_mutex);
        if (stopping) return;
      }
      SiteStatus status;
      std::string error;
      const auto t0 = Clock::now();
      try {
        status = s.site.client->status();
      } catch (const std::exception& e) {
        error = e.what();
      }
      const double rtt = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const std::int64_t polled_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count();
      SiteView* view = &s;
      net::post(*ioc, [this, view, status, error, rtt, polled_ms] {
        view->polled = true;
        view->connected = error.empty();
        view->error = error;
        if (error.empty()) {
          view->lease_holder = status.controller;
          view->scene_name = status.scene.name;
          if (!(view->scene == status.scene)) {
            view->scene = status.scene;
            view->message.reset();  // its aux entries are named after the scene
          }
          view->polled_unix_ms = polled_ms;
          view->rtt_ms = rtt;
          // Before the first sample the status is all the server knows of the executor.
          if (view->seq == 0) {
            view->state = status.state;
            view->breach = status.breach;
            view->task_id = status.task_id;
            view->task_name = status.task_name;
          }
        }
        broadcast(site_message(*view).dump());
      });
    }
    std::unique_lock lock(poller_mutex);
    poller_wake.wait_for(lock, std::chrono::duration<double>(options.status_period),
                         [&] { return stopping; });
    if (stopping) return;
  }
}

void WebServer::Impl::close_login(const std::string& token) {
  for (auto& [id, weak] : std::map(sessions)) {
    if (auto s = weak.lock(); s && s->login() == token) s->close();
  }
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  beast::error_code error;
  const auto address = net::ip::make_address(host, error);
  return !error && address.is_loopback();
}

WebServer::WebServer(WebServerOptions options, const std::vector<WebSite>& sites)
    : impl_(std::make_shared<Impl>()) {
  Impl& m = *impl_;
  const bool https = !options.tls_certificate.empty() || !options.tls_key.empty();
  if (!is_loopback_host(options.host) && (!https || options.users.empty())) {
    throw std::invalid_argument(
        "--web " + options.host +
        ": a console beyond loopback (127.0.0.1, ::1, localhost) "
        "needs HTTPS (--web-tls CERT,KEY) and logins (--web-users FILE); missing: " +
        (!https ? std::string("--web-tls") : std::string()) +
        (!https && options.users.empty() ? " and " : "") +
        (options.users.empty() ? "--web-users" : ""));
  }
  if (https && (options.tls_certificate.empty() || options.tls_key.empty())) {
    throw std::invalid_argument("--web-tls: expected CERT,KEY (both PEM files)");
  }
  if (options.port < 0 || options.port > 65535) {
    throw std::invalid_argument("--web port = " + std::to_string(options.port) +
                                ": expected 0 (any free port) to 65535");
  }
  if (options.workers < 1 || options.workers > 16) {
    throw std::invalid_argument("web workers = " + std::to_string(options.workers) +
                                ": expected 1 to 16");
  }
  if (!(options.status_period >= 0.05 && options.status_period <= 60.0)) {
    throw std::invalid_argument("web status_period = " + std::to_string(options.status_period) +
                                " s: expected 0.05 to 60 s");
  }
  if (options.root.empty()) options.root = default_web_root();
  if (https) {
    m.tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    m.tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
    beast::error_code tls_error;
    m.tls->use_certificate_chain_file(options.tls_certificate, tls_error);
    if (tls_error) {
      throw std::invalid_argument("--web-tls certificate '" + options.tls_certificate +
                                  "': " + tls_error.message());
    }
    m.tls->use_private_key_file(options.tls_key, net::ssl::context::pem, tls_error);
    if (tls_error) {
      throw std::invalid_argument("--web-tls key '" + options.tls_key +
                                  "': " + tls_error.message() + " (or not the certificate's key)");
    }
  }
  for (const WebUser& user : options.users) {
    auto person = std::make_unique<Person>();
    person->user = user;
    ClientOptions client = options.person_client;
    client.credentials.cert = user.certificate;
    client.credentials.key = user.key;
    client.operator_name = user.name;  // on an insecure link, declared instead
    for (const WebSite& site : sites) {
      person->clients.push_back(std::make_unique<RemoteSiteClient>(site.address, client));
    }
    m.people[user.name] = std::move(person);
  }
  for (const WebSite& site : sites) {
    if (site.client == nullptr) {
      throw std::invalid_argument("web site '" + site.name + "': no client");
    }
    auto view = std::make_unique<SiteView>();
    view->site = site;
    view->index = m.sites.size();
    if (site.arm == "iiwa7" || site.arm == "panda") view->arm = std::make_unique<ArmView>(site.arm);
    m.sites.push_back(std::move(view));
  }
  m.options = std::move(options);
  beast::error_code error;
  const std::string host = m.options.host == "localhost" ? "127.0.0.1" : m.options.host;
  const tcp::endpoint endpoint(net::ip::make_address(host, error),
                               static_cast<unsigned short>(m.options.port));
  m.acceptor = std::make_unique<tcp::acceptor>(*m.ioc);
  m.acceptor->open(endpoint.protocol(), error);
  if (!error) m.acceptor->set_option(net::socket_base::reuse_address(true), error);
  if (!error) m.acceptor->bind(endpoint, error);
  if (!error) m.acceptor->listen(net::socket_base::max_listen_connections, error);
  if (error) {
    throw std::runtime_error("--web " + m.options.host + ":" + std::to_string(m.options.port) +
                             ": cannot listen: " + error.message());
  }
  m.port = m.acceptor->local_endpoint().port();
  m.workers = std::make_unique<Workers>(m.options.workers);
  m.stopper = std::make_unique<Workers>(1, false);
  m.checker = std::make_unique<Workers>(1);
  m.timer = std::make_unique<net::steady_timer>(*m.ioc);
  m.accept();
  m.tick();
  m.thread = std::thread([&m] {
    lower_priority();
    m.ioc->run();
  });
  for (auto& site : m.sites) {
    m.pollers.emplace_back([&m, view = site.get()] {
      lower_priority();
      m.poll_site(*view);
    });
  }
}

WebServer::~WebServer() {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.poller_mutex);
    m.stopping = true;
  }
  m.poller_wake.notify_all();
  for (std::thread& poller : m.pollers) {
    if (poller.joinable()) poller.join();
  }
  // Close the browsers' sockets on the server thread, then let it end.
  net::post(*m.ioc, [&m] {
    beast::error_code ignored;
    m.acceptor->close(ignored);
    m.timer->cancel();
    for (auto& [id, weak] : std::map(m.sessions)) {
      if (auto s = weak.lock()) s->close();
    }
    m.ioc->stop();
  });
  if (m.thread.joinable()) m.thread.join();
  // Calls in progress finish (within their deadline); their replies go nowhere.
  m.workers->join();
  m.stopper->join();
  m.checker->join();
  m.timer.reset();
  m.acceptor.reset();
  m.ioc.reset();  // destroys the sessions still owned by pending handlers
}

int WebServer::port() const { return impl_->port; }

std::string WebServer::url() const {
  const std::string& host = impl_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(impl_->tls ? "https://" : "http://") + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(impl_->port) + "/";
}

void WebServer::release_teleop(const std::string& reason) {
  Impl& m = *impl_;
  net::post(*m.ioc, [&m, reason] { m.release_teleop(0, reason); });
}

std::string WebServer::teleop_person() const {
  std::lock_guard lock(impl_->teleop_mutex);
  return impl_->teleop_person;
}

ClientOptions WebServer::person_options(const std::string& person) const {
  ClientOptions client = impl_->options.person_client;
  if (const Person* p = impl_->person(person)) {
    client.credentials.cert = p->user.certificate;
    client.credentials.key = p->user.key;
    client.operator_name = p->user.name;
  }
  return client;
}

const std::string& WebServer::root() const { return impl_->options.root; }

void WebServer::publish_telemetry(std::size_t site, const TelemetrySample& sample,
                                  const JointVector* predicted) {
  SiteView& s = *impl_->sites.at(site);
  SiteView::Sample& back = s.slot.back();
  back.telemetry = sample;
  back.has_predicted = predicted != nullptr;
  if (predicted != nullptr) back.predicted = *predicted;
  s.slot.publish();
  s.published.fetch_add(1, std::memory_order_relaxed);
}

WebServer::Stats WebServer::stats() const {
  Stats out;
  for (const auto& s : impl_->sites) out.published += s->published.load();
  out.sent = impl_->sent.load();
  out.skipped = impl_->skipped.load();
  out.clients = impl_->clients.load();
  out.queued_bytes = impl_->queued_bytes.load();
  return out;
}

}  // namespace tether::local::web
