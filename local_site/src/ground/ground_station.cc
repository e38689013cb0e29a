#include "tether/local/ground/ground_station.h"

#include <signal.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "tether/cli/options.h"
#include "tether/common/units.h"
#include "tether/local/console/p_warning.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/local/link/session_recorder.h"
#include "tether/local/teleop/teleop_session.h"
#include "tether/local/web/web_server.h"
#include "tether/remote/report/plot.h"
#include "tether/tls/x509.h"

namespace tether::local {

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_signal(int) { interrupted.store(true); }

// How long an interrupted ground waits for a remote to close its teleoperation stream
// before it cuts it off (the remote then stops a teleoperated arm as on a lost link): an
// operator's Ctrl-C ends the ground within about a second. A remote on a working link
// closes it at once, or once the increments in flight are played out.
constexpr std::chrono::milliseconds kInterruptedClose{1000};

// Follows one site's telemetry (every `decimation`-th cycle) and reports what changes:
// state, task and breach; hands every sample to the web console when there is one.
class SiteWatch {
 public:
  SiteWatch(const SiteAddress& site, const std::string& operator_name,
            const ClientCredentials& credentials, std::chrono::milliseconds timeout,
            std::uint32_t decimation, std::ostream& out, std::mutex& out_mutex)
      : site_(site), decimation_(decimation), out_(out), out_mutex_(out_mutex) {
    ClientOptions options;
    options.deadline = timeout;
    options.operator_name = operator_name;
    options.credentials = credentials;
    client_ = std::make_unique<RemoteSiteClient>(site.address, options);
  }
  ~SiteWatch() {
    stop_.store(true);
    if (subscription_) subscription_->cancel();
    if (thread_.joinable()) thread_.join();
  }

  RemoteSiteClient& client() { return *client_; }

  void start() {
    const SiteStatus s = client_->status();
    say("connected: site '" + s.site + "', arm " + s.arm + " (" + s.arm_link + "), " +
        to_string(s.state) +
        (s.controller.empty() ? std::string() : ", controlled by " + s.controller));
    arm_ = s.arm;
    subscription_ =
        std::make_unique<TelemetrySubscription>(client_->subscribe_telemetry(decimation_));
    thread_ = std::thread([this] { run(); });
  }

  const std::string& arm() const { return arm_; }
  // From now on every sample also goes to `server` as its site `index` (publish_telemetry
  // never blocks); the server outlives this watch.
  void attach(web::WebServer* server, std::size_t index) {
    web_index_ = index;
    web_.store(server, std::memory_order_release);
  }

  bool breached() const { return breached_.load(); }
  double last_aux0() const { return aux0_.load(); }
  // Whether the scene reports an angle in aux[0] (the door's): every arm reports four aux
  // values, zero where its scene has nothing to say.
  bool has_aux() const { return aux_seen_.load(); }
  // The local model to correct with this site's telemetry of task `task_id` (the task the
  // session started; samples of any other task are not the model's to follow).
  // After correct(nullptr, 0) returns, the model is no longer used.
  void correct(LocalModel* model, std::uint64_t task_id) {
    std::lock_guard lock(model_mutex_);
    model_task_ = task_id;
    model_ = model;
  }
  // (CLOCK_MONOTONIC [ns], aux[0]) as telemetry arrived, for the session's figure.
  std::vector<std::pair<std::int64_t, double>> aux_series() const {
    std::lock_guard lock(series_mutex_);
    return aux_series_;
  }

 private:
  void say(const std::string& text) {
    std::lock_guard lock(out_mutex_);
    out_ << "[" << site_.name << "] " << text << std::endl;
  }

  void run() {
    TelemetrySample sample;
    AchievedFractionWarning p_warning;
    ExecutorState state = ExecutorState::kUnspecified;
    std::uint64_t task = ~0ULL;
    while (!stop_.load()) {
      try {
        const auto next = subscription_->next(sample, std::chrono::milliseconds(200));
        if (next == TelemetrySubscription::Next::kEnded) break;
        if (next == TelemetrySubscription::Next::kTimeout) continue;
      } catch (const RemoteError& e) {
        say(std::string("telemetry lost: ") + e.what());
        break;
      }
      if (!sample.aux.empty()) {
        aux0_.store(sample.aux[0]);
        if (sample.aux[0] != 0.0) aux_seen_.store(true);
        const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count();
        std::lock_guard lock(series_mutex_);
        if (aux_series_.size() < kMaxSeries) aux_series_.emplace_back(now, sample.aux[0]);
      }
      if (!sample.aux.empty() &&
          (sample.state == ExecutorState::kRunning || sample.state == ExecutorState::kStopping)) {
        std::lock_guard lock(model_mutex_);
        if (model_ != nullptr && sample.task_id == model_task_) {
          model_->observe(sample.task_time, sample.aux[0], sample.measured_joints);
        }
      }
      // After the correction: the console shows this sample beside the model's prediction
      // of the arm now, a link delay ahead of it.
      if (web::WebServer* server = web_.load(std::memory_order_acquire)) {
        std::optional<JointVector> predicted;
        {
          std::lock_guard lock(model_mutex_);
          if (model_ != nullptr && sample.task_id == model_task_) {
            predicted = model_->predicted_joints();
          }
        }
        server->publish_telemetry(web_index_, sample, predicted ? &*predicted : nullptr);
      }
      if (auto line = p_warning.update(sample)) say(*line);
      if (sample.state != state || sample.task_id != task) {
        state = sample.state;
        task = sample.task_id;
        std::string text = std::string(to_string(state));
        if (!sample.task_name.empty()) text += ", task '" + sample.task_name + "'";
        if (sample.breach) {
          text += ": " + sample.breach.description;
          if (sample.breach.cause != BreachCause::kOperatorStop) breached_.store(true);
        }
        say(text);
      }
    }
  }

  SiteAddress site_;
  std::uint32_t decimation_;
  std::string arm_;
  std::atomic<web::WebServer*> web_{nullptr};
  std::size_t web_index_ = 0;
  std::ostream& out_;
  std::mutex& out_mutex_;
  std::unique_ptr<RemoteSiteClient> client_;
  std::unique_ptr<TelemetrySubscription> subscription_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> breached_{false};
  std::atomic<double> aux0_{0.0};
  std::atomic<bool> aux_seen_{false};
  std::mutex model_mutex_;  // the model and its task; held while the model observes
  LocalModel* model_ = nullptr;
  std::uint64_t model_task_ = 0;
  static constexpr std::size_t kMaxSeries = 100000;  // 2.8 h of 10 Hz telemetry
  mutable std::mutex series_mutex_;
  std::vector<std::pair<std::int64_t, double>> aux_series_;
};

// The session's figure: the door (aux) angle the remote reported (when it reports one), the
// force and the torque reflected, and each port's observed and dissipated energy, against
// the session's time.
void write_session_figure(const std::string& path, const std::string& title, const TeleopReport& r,
                          const std::vector<std::pair<std::int64_t, double>>& aux,
                          std::int64_t t0_ns) {
  using remote::report::Figure;
  using remote::report::Panel;
  using remote::report::Series;
  Figure figure;
  figure.title = title;
  figure.height_per_panel = 260;
  Panel door{
      "door angle (remote telemetry, as it arrived)", "time [s]", "angle [deg]", {}, {}, {}, {}};
  Series angle{"door", {}, {}, remote::report::palette_color(0)};
  for (const auto& [t, a] : aux) {
    if (t < t0_ns) continue;
    angle.x.push_back(static_cast<double>(t - t0_ns) * 1e-9);
    angle.y.push_back(a * kRadToDeg);
  }
  door.series.push_back(std::move(angle));
  Series model{"local model (no delay)", {}, {}, remote::report::palette_color(7)};
  Series predicted{
      "predicted: model corrected by telemetry", {}, {}, remote::report::palette_color(3)};
  for (const TeleopTrace& row : r.trace) {
    if (!std::isfinite(row.predicted_aux0)) continue;
    model.x.push_back(row.time);
    model.y.push_back(row.model_aux0 * kRadToDeg);
    predicted.x.push_back(row.time);
    predicted.y.push_back(row.predicted_aux0 * kRadToDeg);
  }
  if (!model.x.empty()) {
    door.series.push_back(std::move(model));
    door.series.push_back(std::move(predicted));
  }
  Panel force{"force", "time [s]", "|force| [N]", {}, {}, {}, {}};
  Series remote_force{"remote |F_a| force (as received)", {}, {}, remote::report::palette_color(1)};
  Series rendered_force{"rendered on the hand x 10", {}, {}, remote::report::palette_color(2)};
  Panel torque{"torque", "time [s]", "|torque| [N m]", {}, {}, {}, {}};
  Series remote_torque{
      "remote |F_a| torque (as received)", {}, {}, remote::report::palette_color(1)};
  Series rendered{"rendered on the hand x 100", {}, {}, remote::report::palette_color(2)};
  Panel energy{"channel energy", "time [s]", "energy [J]", {}, {}, {}, {}};
  Series master_obs{"ground port observed", {}, {}, remote::report::palette_color(3)};
  Series slave_obs{"remote port observed", {}, {}, remote::report::palette_color(4)};
  Series master_pc{"ground PC dissipated", {}, {}, remote::report::palette_color(5)};
  Series slave_pc{"remote PC dissipated", {}, {}, remote::report::palette_color(6)};
  for (const TeleopTrace& row : r.trace) {
    remote_force.x.push_back(row.time);
    remote_force.y.push_back(row.remote_force);
    rendered_force.x.push_back(row.time);
    rendered_force.y.push_back(row.rendered_force * 10.0);
    remote_torque.x.push_back(row.time);
    remote_torque.y.push_back(row.remote_torque);
    rendered.x.push_back(row.time);
    rendered.y.push_back(row.rendered_torque * 100.0);
    for (Series* s : {&master_obs, &slave_obs, &master_pc, &slave_pc}) s->x.push_back(row.time);
    master_obs.y.push_back(row.master.observed);
    slave_obs.y.push_back(row.slave.observed);
    master_pc.y.push_back(row.master.dissipated);
    slave_pc.y.push_back(row.slave.dissipated);
  }
  torque.series = {std::move(remote_torque), std::move(rendered)};
  energy.series = {std::move(master_obs), std::move(slave_obs), std::move(master_pc),
                   std::move(slave_pc)};
  energy.references.push_back({-0.01, "-0.01 J", {110, 110, 110}});
  force.series = {std::move(remote_force), std::move(rendered_force)};
  if (!aux.empty()) figure.panels.push_back(std::move(door));
  figure.panels.push_back(std::move(force));
  figure.panels.push_back(std::move(torque));
  figure.panels.push_back(std::move(energy));
  remote::report::write_figure(figure, path);
}

}  // namespace

ForceReflectionConfig default_reflection() {
  ForceReflectionConfig r;
  r.source = ForceReflectionConfig::Source::kMeasured;
  r.force_scale = 0.1;
  r.torque_scale = 0.01;
  r.max_force = 5.0;
  r.max_torque = 0.5;
  r.damping_ratio = 0.15;
  return r;
}

SiteAddress parse_site(const std::string& text) {
  const auto eq = text.find('=');
  SiteAddress site;
  site.name = eq == std::string::npos ? text : text.substr(0, eq);
  try {
    site.address = cli::parse_address(eq == std::string::npos ? text : text.substr(eq + 1)).text;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + text + "': expected [NAME=]HOST:PORT (" + e.what() + ")");
  }
  if (site.name.empty()) {
    throw std::invalid_argument("'" + text + "': expected [NAME=]HOST:PORT (an empty NAME)");
  }
  return site;
}

std::optional<TeleopMode> teleop_mode_from_name(std::string_view name) {
  if (name == "tool") return TeleopMode::kTool;
  if (name == "world") return TeleopMode::kWorld;
  if (name == "camera") return TeleopMode::kCamera;
  return std::nullopt;
}

std::optional<ForceReflectionConfig::Source> reflection_source_from_name(std::string_view name) {
  using Source = ForceReflectionConfig::Source;
  if (name == "none") return Source::kNone;
  if (name == "measured") return Source::kMeasured;
  if (name == "error") return Source::kTrackingError;
  return std::nullopt;
}

namespace {

// With console logins, the browser's teleoperation goes to the site under the name of the
// person who took it: a session with their certificate for as long as they hold it, then
// the next person's. The site accepts the stream only from its lease holder, so the lease
// and the audit trail name the person moving the arm.
// `base`: the ground's own session options (site, rate, settle); each person's session
// takes their name and credentials instead.
int teleoperate_for_people(web::WebServer& server, OperatorInput& input, const SiteAddress& site,
                           const TeleopOptions& base,
                           const std::vector<std::unique_ptr<SiteWatch>>& watches,
                           SessionRecorder* recorder, std::ostream& out, std::mutex& out_mutex) {
  {
    std::lock_guard lock(out_mutex);
    out << "[" << site.name << "] teleoperation from the console, under the name of whoever "
        << "takes it there" << std::endl;
  }
  while (!interrupted.load()) {
    const std::string person = server.teleop_person();
    if (person.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const ClientOptions client = server.person_options(person);
    TeleopOptions teleop = base;
    teleop.operator_name = person;
    teleop.credentials = client.credentials;
    TeleopSession session(input, teleop);
    session.set_recorder(recorder);
    session.start();
    {
      std::lock_guard lock(out_mutex);
      out << "[" << site.name << "] " << person << " teleoperates" << std::endl;
    }
    while (!session.finished() && !interrupted.load() && server.teleop_person() == person) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    session.stop();
    // A remote that does not close the stream (a dead link) is cut off; an interrupted
    // operator waits at most a second for it (kInterruptedClose).
    const auto until = std::chrono::steady_clock::now() +
                       (interrupted.load() ? kInterruptedClose : std::chrono::milliseconds(5000));
    while (!session.finished() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!session.finished()) session.cancel();
    const TeleopReport r = session.wait();
    // A stream the site ended (no lease, a stop) ends the person's hold: they see why and
    // enable again, rather than the ground reopening a refused stream in a loop.
    if (server.teleop_person() == person) {
      server.release_teleop("the site ended the stream: " + r.stream_status);
    }
    std::lock_guard lock(out_mutex);
    out << "[" << site.name << "] " << person << "'s teleoperation ended: " << r.sent
        << " increments sent, " << r.last.teleoperation.applied << " applied"
        << " (stream " << r.stream_status << ")" << std::endl;
  }
  bool breached = false;
  for (const auto& w : watches) breached = breached || w->breached();
  return breached ? 3 : 0;
}

}  // namespace

int run_ground_station(const GroundOptions& options, std::ostream& out) {
  if (options.sites.empty()) throw std::invalid_argument("no remote site given");
  validate(options.input);
  std::mutex out_mutex;
  const std::string operator_name =
      options.operator_name.empty() ? default_operator_name() : options.operator_name;

  if (options.device == "web" && options.web.empty()) {
    throw std::invalid_argument("--device web: the browser's gamepad needs --web HOST:PORT");
  }
  // Declared before the watches, so that it outlives their telemetry threads.
  std::unique_ptr<SessionRecorder> recorder;
  std::unique_ptr<web::WebServer> web_server;
  std::shared_ptr<WebGamepad> gamepad;
  std::vector<std::unique_ptr<SiteWatch>> watches;
  SiteWatch* teleop_watch = nullptr;
  SiteAddress teleop_site;
  // The console plots at up to 60 Hz: with it, telemetry comes every 10th cycle (100 Hz at
  // 1 kHz) rather than every 100th.
  const std::uint32_t decimation = options.web.empty() ? 100 : 10;
  try {
    for (const SiteAddress& site : options.sites) {
      watches.push_back(std::make_unique<SiteWatch>(site, operator_name, options.credentials,
                                                    options.timeout, decimation, out, out_mutex));
      watches.back()->start();
      if (options.teleop_site.empty() ? teleop_watch == nullptr
                                      : site.name == options.teleop_site) {
        teleop_watch = watches.back().get();
        teleop_site = site;
      }
    }
  } catch (const RemoteError& e) {
    out << "tether-ground: " << e.what() << std::endl;
    return e.unreachable() ? 6 : 1;
  }
  if (teleop_watch == nullptr) {
    throw std::invalid_argument("--teleop '" + options.teleop_site + "' is not among the sites");
  }
  // The session's recording: every cycle's telemetry at full rate on a stream of its own,
  // and (below) every increment sent and reflection received.
  std::optional<TelemetrySubscription> recording;
  if (!options.record_path.empty()) {
    try {
      const SiteStatus s = teleop_watch->client().status();
      recorder = std::make_unique<SessionRecorder>(
          options.record_path, "tether-ground",
          std::map<std::string, std::string>{
              {"site", s.site}, {"arm", s.arm}, {"arm_link", s.arm_link}, {"scene", s.scene.name}});
      teleop_watch->client().set_recorder(recorder.get());
      recording.emplace(teleop_watch->client().record_telemetry(*recorder));
    } catch (const RemoteError& e) {
      out << "tether-ground: " << e.what() << std::endl;
      return e.unreachable() ? 6 : 1;
    }
    std::lock_guard lock(out_mutex);
    out << "[" << teleop_site.name << "] recording to " << options.record_path << std::endl;
  }
  // Closes the recording and says what it holds (at every end of the session).
  struct RecordingEnd {
    std::optional<TelemetrySubscription>& recording;
    std::unique_ptr<SessionRecorder>& recorder;
    std::ostream& out;
    std::mutex& out_mutex;
    ~RecordingEnd() {
      if (!recorder) return;
      if (recording) recording->cancel();
      recording.reset();
      try {
        recorder->close();
        std::lock_guard lock(out_mutex);
        out << "recording         " << recorder->path() << ": " << recorder->messages()
            << " messages, " << recorder->bytes() << " bytes (MCAP; tether replay "
            << recorder->path() << ")" << std::endl;
      } catch (const std::exception& e) {
        std::lock_guard lock(out_mutex);
        out << "tether-ground: recording " << recorder->path() << ": " << e.what() << std::endl;
      }
    }
  } recording_end{recording, recorder, out, out_mutex};
  if (!options.web.empty()) {
    const cli::Address address = cli::parse_address(options.web, 0);
    web::WebServerOptions web_options;
    web_options.host = address.host;
    web_options.port = address.port;
    web_options.root = options.web_root;
    // The identity the sites see: the certificate's CN, or the declared name if insecure.
    web_options.operator_name = teleop_watch->client().operator_name();
    web_options.teleop_site = teleop_site.name;
    web_options.device = options.device;
    web_options.tls_certificate = options.web_tls_certificate;
    web_options.tls_key = options.web_tls_key;
    if (!options.web_users.empty()) {
      const bool checked = !options.credentials.insecure && !options.credentials.ca.empty();
      web_options.users = web::load_web_users(
          options.web_users, checked ? tls::read_file(options.credentials.ca, "--ca") : "");
      web_options.person_client.deadline = options.timeout;
      web_options.person_client.credentials = options.credentials;
      if (options.device == "web" && !options.start_task.empty()) {
        throw std::invalid_argument(
            "--start: with --web-users and --device web, whoever takes teleoperation in the "
            "console starts tasks there, under their own name");
      }
    }
    if (options.device == "web") {
      gamepad = std::make_shared<WebGamepad>();
      web_options.gamepad = gamepad;
    }
    std::vector<web::WebSite> web_sites;
    for (std::size_t i = 0; i < watches.size(); ++i) {
      web_sites.push_back({options.sites[i].name, options.sites[i].address, watches[i]->arm(),
                           &watches[i]->client()});
    }
    web_server = std::make_unique<web::WebServer>(web_options, web_sites);
    for (std::size_t i = 0; i < watches.size(); ++i) watches[i]->attach(web_server.get(), i);
    std::lock_guard lock(out_mutex);
    if (!std::filesystem::is_regular_file(std::filesystem::path(web_server->root()) /
                                          "index.html")) {
      out << "tether-ground: warning: no built console in " << web_server->root()
          << " (bash deploy/build-web.sh, or --web-root DIR)" << std::endl;
    }
    out << "console: " << web_server->url() << std::endl;
  }

  struct sigaction action {};
  action.sa_handler = on_signal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  if (options.device == "none") {
    const auto end =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(options.duration > 0 ? options.duration : 1e9));
    while (!interrupted.load() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    bool breached = false;
    for (const auto& w : watches) breached = breached || w->breached();
    return breached ? 3 : 0;
  }

  asio::io_context io;
  HandControllerOptions device_options = options.device_options;
  device_options.web = gamepad;
  OperatorInput input(open_hand_controller(options.device, io, device_options), options.input);
  TeleopOptions teleop;
  teleop.address = teleop_site.address;
  teleop.operator_name = operator_name;
  teleop.credentials = options.credentials;
  teleop.rate = options.rate;
  teleop.settle = options.settle;
  teleop.plane = options.plane;
  // The session runs until told: the duration is kept below, where the stream is ended
  // before the task is stopped.
  teleop.duration = 0.0;
  if (web_server && !options.web_users.empty() && options.device == "web") {
    return teleoperate_for_people(*web_server, input, teleop_site, teleop, watches, recorder.get(),
                                  out, out_mutex);
  }
  {
    std::lock_guard lock(out_mutex);
    out << "[" << teleop_site.name << "] teleoperating with " << input.device().describe() << ", "
        << to_string(input.mode()) << " mode, " << options.rate << " Hz" << std::endl;
  }
  // Built before the session: fetching the task and compiling the scene take a round trip
  // and a moment that must not delay the start.
  std::unique_ptr<LocalModel> model;  // outlives the session (declared first)
  // The teleoperation watch stops correcting the model before the model goes.
  struct Detach {
    SiteWatch* watch = nullptr;
    ~Detach() {
      if (watch != nullptr) watch->correct(nullptr, 0);
    }
  } detach;
  std::optional<TaskParameters> task;
  if (!options.start_task.empty()) {
    try {
      task = teleop_watch->client().get(options.start_task).second;
      if (!options.predict.empty()) {
        model = std::make_unique<LocalModel>(parse_local_model(options.predict), *task);
        const SiteStatus status = teleop_watch->client().status();
        if (status.has_measured_joints &&
            (status.measured_joints - model->initial_joints()).cwiseAbs().maxCoeff() > 0.02) {
          out << "[" << teleop_site.name << "] warning: the remote's arm is not where the local "
              << "model starts (its scene's initial configuration): the prediction is offset"
              << std::endl;
        }
      }
    } catch (const RemoteError& e) {
      out << "tether-ground: " << e.what() << std::endl;
      return e.unreachable() ? 6 : 1;
    }
  }
  TeleopSession session(input, teleop);
  session.set_recorder(recorder.get());
  session.start();
  if (!options.start_task.empty()) {
    // The task starts on the operator's first enable, as an enabling device gates motion.
    bool said = false;
    while (!session.enabled_once() && !session.finished() && !interrupted.load()) {
      if (!said) {
        std::lock_guard lock(out_mutex);
        out << "[" << teleop_site.name << "] '" << options.start_task
            << "' starts when you enable (hold the deadman; space on a keyboard)" << std::endl;
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!session.enabled_once()) {
      session.stop();
      session.wait();
      out << "[" << teleop_site.name << "] the session ended before the operator enabled: '"
          << options.start_task << "' was not started" << std::endl;
      return 0;
    }
    try {
      // The model starts with the call: the remote starts when the call arrives and takes
      // the increments sampled from then on, so both see the same motion.
      if (task->teleoperation.reflection != ReflectionMethod::kNone &&
          (!input.device().has_actuators() ||
           input.config().reflection.source == ForceReflectionConfig::Source::kNone)) {
        std::lock_guard lock(out_mutex);
        out << "[" << teleop_site.name << "] warning: '" << options.start_task << "' uses the "
            << to_string(task->teleoperation.reflection)
            << " reflection channel, which lets the remote do only the work the operator's hand "
               "puts in against the reflected wrench; this hand controller renders none, so "
               "the arm will not push against anything"
            << std::endl;
      }
      if (model) session.attach_model(model.get(), options.reflect_from_model);
      session.set_task(*task);
      const std::uint64_t task_id = teleop_watch->client().start(options.start_task);
      if (model) {
        teleop_watch->correct(model.get(), task_id);
        detach.watch = teleop_watch;
      }
    } catch (const RemoteError& e) {
      session.stop();
      session.wait();
      out << "tether-ground: " << e.what() << std::endl;
      return e.unreachable() ? 6 : 1;
    }
  }
  const auto begin = std::chrono::steady_clock::now();
  // The link as the session sees it: silent once no reflection came for the longer of
  // 0.5 s and three round trips, and back when one comes; the operator reads both.
  std::int64_t silent_since = 0;
  while (!session.finished() && !interrupted.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (const std::int64_t last = session.last_reflection_ns(); last != 0) {
      const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count();
      const auto quiet = static_cast<std::int64_t>(std::max(0.5, 3.0 * session.round_trip()) * 1e9);
      if (silent_since == 0 && now - last > quiet) {
        silent_since = last;
        std::lock_guard lock(out_mutex);
        out << "[" << teleop_site.name << "] link silent: no reflection for "
            << (now - last) / 1000000 << " ms" << std::endl;
      } else if (silent_since != 0 && last > silent_since) {
        const ReflectionSample r = session.latest_reflection();
        std::lock_guard lock(out_mutex);
        out << "[" << teleop_site.name << "] link back after " << (last - silent_since) / 1000000
            << " ms; the site is " << to_string(r.state);
        if (r.state == ExecutorState::kStopped || r.state == ExecutorState::kStopping) {
          out << (r.breach ? " (" + r.breach.description + ")" : std::string())
              << ": reset it (tether reset), start the task again and enable (release the "
                 "switch, then hold it)";
        }
        out << std::endl;
        silent_since = 0;
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (options.duration > 0.0 && elapsed >= options.duration) break;
  }
  // Waits up to `limit` for the remote to close the stream.
  const auto closed_within = [&](std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!session.finished() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return session.finished();
  };
  if (!session.finished() && !interrupted.load()) {
    // Time is up: end the stream before the task, so that the remote plays out the
    // increments still in flight (it closes the stream once the last is applied, within
    // about 2 s) and the count of applied increments is complete. An interrupted
    // operator gets the stop at once instead.
    session.stop();
    closed_within(std::chrono::milliseconds(5000));
  }
  // The task this session started is its to stop: a stream's end alone leaves the arm
  // holding compliantly (an end, not a stall).
  try {
    if (!options.start_task.empty()) teleop_watch->client().stop();
  } catch (const RemoteError& e) {
    out << "tether-ground: stop: " << e.what() << std::endl;
  }
  session.stop();
  // A remote that does not close the stream (a dead link) is cut off; an interrupted
  // operator waits at most kInterruptedClose for it.
  if (!closed_within(interrupted.load() ? kInterruptedClose : std::chrono::milliseconds(5000))) {
    session.cancel();
  }
  const TeleopReport r = session.wait();
  // Let the watches report: their telemetry comes over the same delayed link, half a round
  // trip behind. Not after a Ctrl-C: the operator asked to be done, and the remotes may
  // already be gone with their telemetry.
  if (!interrupted.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150) +
                                std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::duration<double>(r.latency_p99 * 0.5)));
  }

  bool breached = false;
  for (const auto& w : watches) breached = breached || w->breached();
  const auto ms = [](double s) { return s * 1e3; };
  char line[512];
  std::lock_guard lock(out_mutex);
  out << "[" << teleop_site.name << "] teleoperation summary\n";
  std::snprintf(line, sizeof line,
                "  increments        %llu sent, %llu applied by the remote, %llu before the "
                "task started, %llu lost, %llu duplicates\n",
                static_cast<unsigned long long>(r.sent),
                static_cast<unsigned long long>(r.last.teleoperation.applied),
                static_cast<unsigned long long>(r.last.teleoperation.stale),
                static_cast<unsigned long long>(r.last.teleoperation.lost),
                static_cast<unsigned long long>(r.last.teleoperation.duplicates));
  out << line;
  std::snprintf(line, sizeof line,
                "  round trip        p50 %.3f ms, p99 %.3f ms, max %.3f ms over %llu increments "
                "(sample -> applied -> reflected)\n",
                ms(r.latency_p50), ms(r.latency_p99), ms(r.latency_max),
                static_cast<unsigned long long>(r.measured));
  out << line;
  std::snprintf(line, sizeof line,
                "  force reflection  %llu samples, peak |f| %.2f N, |tau| %.2f N m\n",
                static_cast<unsigned long long>(r.reflections), r.peak_force, r.peak_torque);
  out << line;
  out << "  remote state      " << to_string(r.last.state)
      << (r.last.breach ? " (" + r.last.breach.description + ")" : std::string()) << "\n";
  std::snprintf(line, sizeof line,
                "  reflection        %s: least observed energy ground %.4f J, remote %.4f J; "
                "dissipated ground %.3f J, remote %.3f J; peak on the hand %.3f N m\n",
                to_string(r.reflection), r.min_master_observed, r.min_slave_observed,
                r.master_dissipated, r.slave_dissipated, r.peak_rendered_torque);
  out << line;
  std::snprintf(line, sizeof line,
                "  link              stall bound %.3f s, playout delay %.3f s, %llu discarded "
                "on disable\n",
                r.last.teleoperation.stall_bound, r.last.teleoperation.playout_delay,
                static_cast<unsigned long long>(r.last.teleoperation.discarded));
  out << line;
  if (r.link_estimated) {
    std::snprintf(line, sizeof line,
                  "  link estimate     one-way delay %.1f ms, remote clock %+.3f ms from ours "
                  "(best of the session)\n",
                  ms(r.one_way_delay), ms(r.clock_offset));
    out << line;
  }
  if (teleop_watch->has_aux()) {  // the door scene's angle; other scenes report none
    out << "  door/aux angle    " << teleop_watch->last_aux0() * kRadToDeg << " deg";
    if (std::isfinite(r.predicted_aux0)) {
      out << " (predicted " << r.predicted_aux0 * kRadToDeg << " deg)";
    }
    out << "\n";
  }
  if (r.prediction.samples > 0) {
    const PredictionError& e = r.prediction;
    std::snprintf(line, sizeof line,
                  "  prediction        door angle error over %llu remote samples, RMS / max "
                  "[deg]: delayed view %.2f / %.2f, model %.2f / %.2f, model corrected by "
                  "telemetry %.2f / %.2f; joints corrected max %.1f mrad\n",
                  static_cast<unsigned long long>(e.samples), e.delayed_rms * kRadToDeg,
                  e.delayed_max * kRadToDeg, e.model_rms * kRadToDeg, e.model_max * kRadToDeg,
                  e.corrected_rms * kRadToDeg, e.corrected_max * kRadToDeg,
                  e.joints_corrected_max * 1e3);
    out << line;
  }
  if (r.datagrams.offered) {
    std::snprintf(line, sizeof line,
                  "  data plane        %s: %llu datagrams sent to %s (%.1f kB), %llu "
                  "reflections received (%.1f kB), %llu dropped; %llu increments on the "
                  "stream; %llu concealed by the remote\n",
                  to_string(r.plane), static_cast<unsigned long long>(r.datagrams.sent),
                  r.datagrams.peer.c_str(), static_cast<double>(r.datagrams.bytes_sent) / 1e3,
                  static_cast<unsigned long long>(r.datagrams.received),
                  static_cast<double>(r.datagrams.bytes_received) / 1e3,
                  static_cast<unsigned long long>(r.datagrams.dropped),
                  static_cast<unsigned long long>(r.datagrams.stream_increments),
                  static_cast<unsigned long long>(r.last.teleoperation.concealed));
    out << line;
  } else {
    out << "  data plane        stream" << std::endl;
  }
  if (!r.datagrams.fallback.empty()) {
    out << "  fallback          " << r.datagrams.fallback << std::endl;
  }
  out << "  stream            " << r.stream_status << std::endl;
  if (!options.report_path.empty()) {
    std::ofstream report(options.report_path);
    report << "sent " << r.sent << "\napplied " << r.last.teleoperation.applied << "\nstale "
           << r.last.teleoperation.stale << "\ndiscarded " << r.last.teleoperation.discarded
           << "\nlost " << r.last.teleoperation.lost << "\nduplicates "
           << r.last.teleoperation.duplicates << "\nreflections " << r.reflections << "\nmeasured "
           << r.measured << "\nlatency_p50_ms " << ms(r.latency_p50) << "\nlatency_p99_ms "
           << ms(r.latency_p99) << "\nlatency_max_ms " << ms(r.latency_max) << "\npeak_force_n "
           << r.peak_force << "\npeak_torque_nm " << r.peak_torque << "\nfinal_state "
           << to_string(r.last.state) << "\naux0_deg " << teleop_watch->last_aux0() * kRadToDeg
           << "\nreflection " << to_string(r.reflection) << "\nmin_master_observed_j "
           << r.min_master_observed << "\nmin_slave_observed_j " << r.min_slave_observed
           << "\nmaster_dissipated_j " << r.master_dissipated << "\nslave_dissipated_j "
           << r.slave_dissipated << "\npeak_rendered_torque_nm " << r.peak_rendered_torque
           << "\nstall_bound_s " << r.last.teleoperation.stall_bound << "\nplayout_delay_s "
           << r.last.teleoperation.playout_delay << "\none_way_delay_ms " << ms(r.one_way_delay)
           << "\nclock_offset_ms " << ms(r.clock_offset) << "\npredicted_aux0_deg "
           << r.predicted_aux0 * kRadToDeg << "\nprediction_samples " << r.prediction.samples
           << "\nprediction_delayed_rms_deg " << r.prediction.delayed_rms * kRadToDeg
           << "\nprediction_model_rms_deg " << r.prediction.model_rms * kRadToDeg
           << "\nprediction_corrected_rms_deg " << r.prediction.corrected_rms * kRadToDeg
           << "\nprediction_corrected_max_deg " << r.prediction.corrected_max * kRadToDeg
           << "\nplane " << to_string(r.plane) << "\nconcealed " << r.last.teleoperation.concealed
           << "\ndatagrams_sent " << r.datagrams.sent << "\ndatagram_bytes_sent "
           << r.datagrams.bytes_sent << "\ndatagrams_received " << r.datagrams.received
           << "\ndatagram_bytes_received " << r.datagrams.bytes_received << "\ndatagrams_dropped "
           << r.datagrams.dropped << "\nstream_increments " << r.datagrams.stream_increments
           << "\nbreached " << (breached ? 1 : 0) << "\n";
  }
  if (!options.plot_path.empty()) {
    try {
      write_session_figure(
          options.plot_path,
          "teleoperation of " + teleop_site.name + ", reflection " + to_string(r.reflection), r,
          teleop_watch->has_aux() ? teleop_watch->aux_series()
                                  : std::vector<std::pair<std::int64_t, double>>{},
          session.start_ns());
      out << "  figure            " << options.plot_path << "\n";
    } catch (const std::exception& e) {
      out << "tether-ground: --plot: " << e.what() << "\n";
    }
  }
  if (breached) return 3;
  return r.ok || r.stream_status.empty() ? 0 : 1;
}

}  // namespace tether::local
