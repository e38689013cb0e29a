#include "tether/local/link/remote_site_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::local {
namespace {

// This suite tests the client's calls against a fake site on loopback, in plaintext; the
// security suite runs the real site over mutual TLS.
ClientOptions plaintext(const std::string& name, std::chrono::milliseconds deadline) {
  ClientOptions options;
  options.operator_name = name;
  options.deadline = deadline;
  options.credentials.insecure = true;
  return options;
}

using namespace std::chrono_literals;

// A remote site for the client to talk to: answers as the schema says, records who called.
class TestSite final : public v1::RemoteSite::Service {
 public:
  explicit TestSite(std::string name) : name_(std::move(name)) {}

  std::vector<std::string> operators() {
    std::lock_guard lock(mutex_);
    return operators_;
  }

  grpc::Status GetStatus(grpc::ServerContext* context, const v1::GetStatusRequest*,
                         v1::SiteStatus* reply) override {
    record(context);
    reply->set_site(name_);
    reply->set_arm("iiwa7");
    reply->set_state(v1::EXECUTOR_STATE_STOPPED);
    reply->mutable_breach()->set_cause(v1::BREACH_CAUSE_FORCE);
    reply->mutable_breach()->set_value(93.0);
    reply->mutable_breach()->set_bound(80.0);
    reply->set_controller("holder@ground");
    return grpc::Status::OK;
  }

  grpc::Status UploadTask(grpc::ServerContext* context, const v1::UploadTaskRequest* request,
                          v1::UploadTaskReply* reply) override {
    record(context);
    if (request->task().impedance().mass().rotation().x() < 0) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "impedance.mass.rotation.x = -2: must be finite and > 0"};
    }
    std::lock_guard lock(mutex_);
    stored_[request->name()] = request->task();
    reply->set_name(request->name());
    reply->set_revision(++revision_);
    return grpc::Status::OK;
  }

  grpc::Status GetTask(grpc::ServerContext* context, const v1::GetTaskRequest* request,
                       v1::GetTaskReply* reply) override {
    record(context);
    std::lock_guard lock(mutex_);
    const auto it = stored_.find(request->name());
    if (it == stored_.end())
      return {grpc::StatusCode::NOT_FOUND, "no task '" + request->name() + "'"};
    reply->mutable_summary()->set_name(it->first);
    reply->mutable_summary()->set_revision(revision_);
    reply->mutable_summary()->add_behaviours(v1::BEHAVIOUR_FORCE_CONTROL);
    *reply->mutable_task() = it->second;
    return grpc::Status::OK;
  }

  grpc::Status StartTask(grpc::ServerContext* context, const v1::StartTaskRequest*,
                         v1::StartTaskReply*) override {
    record(context);
    return {grpc::StatusCode::FAILED_PRECONDITION, "control is held by holder@ground"};
  }

  grpc::Status ListTasks(grpc::ServerContext* context, const v1::ListTasksRequest*,
                         v1::ListTasksReply*) override {
    record(context);
    std::this_thread::sleep_for(500ms);  // slower than a short deadline
    return grpc::Status::OK;
  }

  // decimation 0: five samples, then the stream ends; otherwise until cancelled.
  grpc::Status StreamTelemetry(grpc::ServerContext* context, const v1::TelemetryRequest* request,
                               grpc::ServerWriter<v1::Telemetry>* writer) override {
    record(context);
    for (std::uint64_t n = 1; request->decimation() != 0 || n <= 5; ++n) {
      if (context->IsCancelled()) return grpc::Status::CANCELLED;
      v1::Telemetry t;
      t.set_cycle(n);
      t.set_task_name("door_force");
      t.add_aux(0.1 * static_cast<double>(n));
      if (!writer->Write(t)) return grpc::Status::OK;
      std::this_thread::sleep_for(1ms);
    }
    return grpc::Status::OK;
  }

 private:
  void record(grpc::ServerContext* context) {
    const auto& metadata = context->client_metadata();
    const auto it = metadata.find("tether-operator");
    std::lock_guard lock(mutex_);
    operators_.emplace_back(
        it == metadata.end() ? "" : std::string(it->second.data(), it->second.size()));
  }

  std::string name_;
  std::mutex mutex_;
  std::vector<std::string> operators_;
  std::map<std::string, v1::TaskParameters> stored_;
  std::uint64_t revision_ = 0;
};

struct RunningSite {
  explicit RunningSite(const std::string& name) : service(name) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~RunningSite() { server->Shutdown(std::chrono::system_clock::now() + 1s); }
  TestSite service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

TEST(RemoteSiteClient, SendsTheOperatorWithEveryCallAndConvertsTheReply) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 5000ms));
  const SiteStatus status = client.status();
  EXPECT_EQ(status.site, "lab-1");
  EXPECT_EQ(status.state, ExecutorState::kStopped);
  EXPECT_EQ(status.breach.cause, BreachCause::kForce);
  EXPECT_DOUBLE_EQ(status.breach.value, 93.0);
  EXPECT_EQ(status.controller, "holder@ground");
  EXPECT_EQ(site.service.operators(), std::vector<std::string>{"ana@ground"});
}

TEST(RemoteSiteClient, DefaultsTheOperatorToUserAtHost) {
  const std::string name = default_operator_name();
  ASSERT_NE(name.find('@'), std::string::npos) << name;
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("", 5000ms));
  EXPECT_EQ(client.operator_name(), name);
  client.status();
  EXPECT_EQ(site.service.operators().back(), name);
}

TEST(RemoteSiteClient, UploadsAndGetsATaskBack) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 5000ms));
  TaskParameters task;
  task.name = "push";
  task.force_control.enabled = true;
  task.force_control.reference_wrench[3] = 18.0;
  const UploadResult result = client.upload("push", task, false);
  EXPECT_EQ(result.name, "push");
  EXPECT_EQ(result.revision, 1u);
  const auto [summary, stored] = client.get("push");
  EXPECT_EQ(summary.behaviours, std::vector<Behaviour>{Behaviour::kForceControl});
  EXPECT_TRUE(stored.force_control.enabled);
  EXPECT_DOUBLE_EQ(stored.force_control.reference_wrench[3], 18.0);
}

TEST(RemoteSiteClient, TurnsAnErrorStatusIntoARemoteErrorWithCodeAndMessage) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 5000ms));
  try {
    client.start("push");
    FAIL() << "StartTask did not throw";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.code(), RemoteCode::kFailedPrecondition);
    EXPECT_STREQ(e.code_name(), "FAILED_PRECONDITION");
    EXPECT_EQ(e.message(), "control is held by holder@ground");
    EXPECT_NE(std::string(e.what()).find("StartTask on " + site.address), std::string::npos);
    EXPECT_FALSE(e.unreachable());
  }
  try {
    client.get("missing");
    FAIL() << "GetTask did not throw";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.code(), RemoteCode::kNotFound);
  }
  TaskParameters bad;
  bad.impedance.mass[3] = -2.0;
  try {
    client.upload("bad", bad, false);
    FAIL() << "UploadTask did not throw";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.code(), RemoteCode::kInvalidArgument);
    EXPECT_EQ(e.message(), "impedance.mass.rotation.x = -2: must be finite and > 0");
  }
}

TEST(RemoteSiteClient, GivesUpAtTheDeadline) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 50ms));
  try {
    client.list();
    FAIL() << "ListTasks returned before the site answered";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.code(), RemoteCode::kDeadlineExceeded);
    EXPECT_TRUE(e.unreachable());
  }
}

TEST(RemoteSiteClient, ReportsAnUnreachableSite) {
  // A port nothing listens on: take one from a site, then shut the site down.
  std::string address;
  {
    RunningSite site("gone");
    address = site.address;
  }
  RemoteSiteClient client(address, plaintext("ana@ground", 2000ms));
  try {
    client.status();
    FAIL() << "GetStatus reached a closed port";
  } catch (const RemoteError& e) {
    EXPECT_TRUE(e.unreachable()) << e.what();
  }
}

TEST(RemoteSiteClient, RefusesToConnectWithoutCredentialsUnlessInsecure) {
  try {
    RemoteSiteClient client("127.0.0.1:1");
    FAIL() << "a client without credentials was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("give --ca, --cert and --key"), std::string::npos)
        << e.what();
  }
}

TEST(RemoteSiteClient, TalksToSeveralSitesFromOneProcess) {
  RunningSite a("site-a");
  RunningSite b("site-b");
  RemoteSiteClient to_a(a.address, plaintext("ana@ground", 5000ms));
  RemoteSiteClient to_b(b.address, plaintext("ben@ground", 5000ms));
  EXPECT_EQ(to_a.status().site, "site-a");
  EXPECT_EQ(to_b.status().site, "site-b");
  EXPECT_EQ(a.service.operators(), std::vector<std::string>{"ana@ground"});
  EXPECT_EQ(b.service.operators(), std::vector<std::string>{"ben@ground"});
}

TEST(RemoteSiteClient, ReadsTheTelemetryStreamUntilItEnds) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 5000ms));
  TelemetrySubscription stream = client.subscribe_telemetry(0);
  std::vector<TelemetrySample> samples;
  TelemetrySample s;
  for (;;) {
    const auto next = stream.next(s, 5000ms);
    ASSERT_NE(next, TelemetrySubscription::Next::kTimeout);
    if (next == TelemetrySubscription::Next::kEnded) break;
    samples.push_back(s);
  }
  ASSERT_EQ(samples.size(), 5u);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    EXPECT_EQ(samples[k].cycle, k + 1);
    ASSERT_EQ(samples[k].aux.size(), 1u);
    EXPECT_DOUBLE_EQ(samples[k].aux[0], 0.1 * static_cast<double>(k + 1));
  }
  EXPECT_EQ(stream.dropped(), 0u);
  EXPECT_EQ(site.service.operators().back(), "ana@ground");
}

TEST(RemoteSiteClient, CancelEndsAnEndlessStream) {
  RunningSite site("lab-1");
  RemoteSiteClient client(site.address, plaintext("ana@ground", 5000ms));
  TelemetrySubscription stream = client.subscribe_telemetry(1);
  TelemetrySample s;
  ASSERT_EQ(stream.next(s, 5000ms), TelemetrySubscription::Next::kSample);
  stream.cancel();
  auto next = TelemetrySubscription::Next::kSample;
  for (int k = 0; k < 100000 && next == TelemetrySubscription::Next::kSample; ++k) {
    next = stream.next(s, 5000ms);
  }
  EXPECT_EQ(next, TelemetrySubscription::Next::kEnded);
}

TEST(RemoteSiteClient, AStreamFromAnUnreachableSiteFails) {
  std::string address;
  {
    RunningSite site("gone");
    address = site.address;
  }
  RemoteSiteClient client(address, plaintext("ana@ground", 2000ms));
  TelemetrySubscription stream = client.subscribe_telemetry(1);
  TelemetrySample s;
  try {
    while (stream.next(s, 5000ms) == TelemetrySubscription::Next::kTimeout) {
    }
    FAIL() << "the stream from a closed port did not fail";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.code(), RemoteCode::kUnavailable) << e.what();
  }
}

}  // namespace
}  // namespace tether::local
