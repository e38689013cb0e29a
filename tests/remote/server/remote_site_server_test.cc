// The remote site's gRPC service in front of a real-time executor on the embedded MuJoCo
// door scene, exercised through the generated stubs as a ground station would.
#include "tether/remote/server/remote_site_server.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/codegen/sync_stream.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"
#include "tether/datagram/teleop_datagram.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::remote {
namespace {

using namespace std::chrono_literals;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// A shipped task, tolerant of missed deadlines: these tests judge the service, and a VM
// whose host steals the CPU for 80 ms would otherwise stop the task as a loop overrun.
v1::TaskParameters shipped_task(const std::string& name) {
  TaskParameters task =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/" + name + ".textproto");
  task.bounds.max_consecutive_overruns = 50;
  return proto::from_task(task);
}

class RemoteSiteServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_default_arm();
    SimulationOptions sim;
    sim.scene = SceneKind::kDoor;
    sim.initial_position = default_initial_position(SceneKind::kDoor, model_);
    arm_ = std::make_unique<SimulatedArm>(model_, sim);
    executor_ = std::make_unique<Executor>(model_, queue_);
    loop_ = std::make_unique<ControlLoop>(*arm_, *executor_, Pacing::kRealTime);
    loop_->start();
    ServerOptions options;
    // In process, the server's semantics: plaintext with declared names (the security
    // tests run the real process over mutual TLS).
    options.security.insecure = true;
    options.address = "127.0.0.1:0";
    options.site_name = "test-site";
    options.lease_timeout = 0.5;
    options.audit_file = audit_file_;
    options.scene = arm_->scene_description();
    server_ = std::make_unique<RemoteSiteServer>(options, *executor_, *loop_, queue_, model_.name);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::RemoteSite::NewStub(channel_);
  }

  void TearDown() override {
    server_->shutdown();
    loop_->stop();
  }

  std::unique_ptr<grpc::ClientContext> as(const std::string& operator_name) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!operator_name.empty()) context->AddMetadata("tether-operator", operator_name);
    context->set_deadline(std::chrono::system_clock::now() + 5s);
    return context;
  }

  grpc::Status upload(const std::string& who, const std::string& name,
                      const v1::TaskParameters& task, bool replace = false) {
    v1::UploadTaskRequest request;
    request.set_name(name);
    *request.mutable_task() = task;
    request.set_replace(replace);
    v1::UploadTaskReply reply;
    return stub_->UploadTask(as(who).get(), request, &reply);
  }

  grpc::Status start(const std::string& who, const std::string& name) {
    v1::StartTaskRequest request;
    request.set_name(name);
    v1::StartTaskReply reply;
    return stub_->StartTask(as(who).get(), request, &reply);
  }

  v1::SiteStatus status() {
    v1::SiteStatus reply;
    EXPECT_TRUE(stub_->GetStatus(as("").get(), v1::GetStatusRequest{}, &reply).ok());
    return reply;
  }

  // Waits until the executor state is `state`; returns the status seen last.
  v1::SiteStatus wait_for(v1::ExecutorState state, std::chrono::milliseconds limit = 2000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    v1::SiteStatus s = status();
    while (s.state() != state && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(2ms);
      s = status();
    }
    return s;
  }

  std::string audit_file_;  // empty: the audit trail in memory
  ArmModel model_;
  HandControllerQueue queue_;
  std::unique_ptr<SimulatedArm> arm_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<ControlLoop> loop_;
  std::unique_ptr<RemoteSiteServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RemoteSite::Stub> stub_;
};

TEST_F(RemoteSiteServerTest, RefusesAnInvalidUploadNamingFieldValueAndRangeAndStoresNothing) {
  v1::TaskParameters task = shipped_task("door_force");
  task.mutable_impedance()->mutable_damping()->mutable_translation()->set_x(-5.0);
  const grpc::Status s = upload("alice", "door", task);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("impedance.damping"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("-5"), std::string::npos) << s.error_message();
  v1::ListTasksReply list;
  ASSERT_TRUE(stub_->ListTasks(as("alice").get(), {}, &list).ok());
  EXPECT_EQ(list.tasks_size(), 0);

  const grpc::Status bad_name = upload("alice", "door/../x", shipped_task("door_force"));
  EXPECT_EQ(bad_name.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad_name.error_message().find("name"), std::string::npos);
}

TEST_F(RemoteSiteServerTest, UploadsListsGetsReplacesAndDeletesTaskSets) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  EXPECT_EQ(upload("alice", "door", shipped_task("door_force")).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_spring"), true).ok());
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());

  v1::ListTasksReply list;
  ASSERT_TRUE(stub_->ListTasks(as("bob").get(), {}, &list).ok());
  ASSERT_EQ(list.tasks_size(), 2);
  EXPECT_EQ(list.tasks(0).name(), "door");
  EXPECT_EQ(list.tasks(0).revision(), 2u);
  EXPECT_EQ(list.tasks(0).behaviours(0), v1::BEHAVIOUR_SPRING_TRAJECTORY);
  EXPECT_EQ(list.tasks(1).name(), "shared");

  v1::GetTaskRequest get;
  get.set_name("shared");
  v1::GetTaskReply task;
  ASSERT_TRUE(stub_->GetTask(as("bob").get(), get, &task).ok());
  EXPECT_TRUE(task.task().teleoperation().enabled());

  v1::DeleteTaskRequest remove;
  remove.set_name("shared");
  v1::DeleteTaskReply removed;
  ASSERT_TRUE(stub_->DeleteTask(as("alice").get(), remove, &removed).ok());
  EXPECT_EQ(stub_->DeleteTask(as("alice").get(), remove, &removed).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(start("alice", "shared").error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(RemoteSiteServerTest, OneOperatorControlsOthersObserveAndAnyoneMayStop) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  const grpc::Status refused = upload("bob", "other", shipped_task("door_force"));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("'alice'"), std::string::npos);
  EXPECT_EQ(upload("", "other", shipped_task("door_force")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status().controller(), "alice");

  ASSERT_TRUE(start("alice", "door").ok());
  EXPECT_EQ(wait_for(v1::EXECUTOR_STATE_RUNNING).state(), v1::EXECUTOR_STATE_RUNNING);
  v1::StopReply stopped;
  ASSERT_TRUE(stub_->Stop(as("bob").get(), {}, &stopped).ok());
  const v1::SiteStatus s = wait_for(v1::EXECUTOR_STATE_STOPPED);
  EXPECT_EQ(s.state(), v1::EXECUTOR_STATE_STOPPED);
  EXPECT_EQ(s.breach().cause(), v1::BREACH_CAUSE_OPERATOR_STOP);

  // The lease lapses after its timeout (0.5 s here) of silence; then bob may take it.
  std::this_thread::sleep_for(700ms);
  v1::AcquireControlReply acquired;
  ASSERT_TRUE(stub_->AcquireControl(as("bob").get(), {}, &acquired).ok());
  EXPECT_EQ(acquired.controller(), "bob");
}

TEST_F(RemoteSiteServerTest, StartedDoorTaskOpensTheDoorInTheTelemetryStream) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  ASSERT_TRUE(start("alice", "door").ok());
  v1::TelemetryRequest request;
  request.set_decimation(10);
  auto context = as("observer");
  auto reader = stub_->StreamTelemetry(context.get(), request);
  v1::Telemetry sample;
  double door = 0.0;
  std::uint64_t last_cycle = 0;
  int samples = 0;
  bool gap = false;
  while (reader->Read(&sample)) {
    ++samples;
    if (last_cycle != 0 && sample.cycle() != last_cycle + 10) gap = true;
    last_cycle = sample.cycle();
    if (sample.state() != v1::EXECUTOR_STATE_RUNNING) continue;
    EXPECT_EQ(sample.task_name(), "door");
    ASSERT_EQ(sample.behaviours_size(), 1);
    EXPECT_EQ(sample.behaviours(0), v1::BEHAVIOUR_FORCE_CONTROL);
    ASSERT_EQ(sample.aux_size(), 4);
    door = sample.aux(0);
    if (sample.task_time_s() > 3.0) break;
  }
  context->TryCancel();
  EXPECT_GT(door * kRadToDeg, 10.0);
  EXPECT_GT(samples, 250);
  EXPECT_FALSE(gap) << "decimated telemetry skipped cycles";
  const v1::SiteStatus final_status = status();
  EXPECT_EQ(final_status.breach().cause(), v1::BREACH_CAUSE_NONE)
      << final_status.breach().description();
}

TEST_F(RemoteSiteServerTest, SetParameterChangesTheRunningTaskWithoutRestartingIt) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  v1::SetParameterRequest set;
  set.set_path("force_control.reference_wrench.torque.x");
  set.set_value("12");
  v1::UpdateTaskReply reply;
  EXPECT_EQ(stub_->SetParameter(as("alice").get(), set, &reply).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  ASSERT_TRUE(start("alice", "door").ok());
  std::this_thread::sleep_for(300ms);
  const double before = executor_->telemetry().task_time;
  ASSERT_TRUE(stub_->SetParameter(as("alice").get(), set, &reply).ok());

  set.set_path("force_control.reference_wrench.torque.w");
  grpc::Status s = stub_->SetParameter(as("alice").get(), set, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("force_control.reference_wrench.torque.w: "
                                    "force_control.reference_wrench.torque has no field 'w'",
                                    0),
            0u)
      << s.error_message();

  set.set_path("impedance.mass.translation.x");
  set.set_value("-3");
  s = stub_->SetParameter(as("alice").get(), set, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("impedance.mass.translation.x = -3: must be finite and > 0"),
            std::string::npos)
      << s.error_message();

  set.set_value("ten");
  s = stub_->SetParameter(as("alice").get(), set, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("impedance.mass.translation.x = 'ten': not a valid double", 0),
            0u)
      << s.error_message();

  // The name identifies the task: it is no parameter, whatever its length.
  for (const std::string& name : {std::string("renamed"), std::string(16000, 'x')}) {
    set.set_path("name");
    set.set_value("\"" + name + "\"");
    s = stub_->SetParameter(as("alice").get(), set, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message().rfind("name: identifies the task and is not a parameter", 0), 0u)
        << s.error_message().substr(0, 200);
  }
  set.set_path("impedance.mass.translation.x");
  set.set_value(std::string(18000, '1'));
  s = stub_->SetParameter(as("alice").get(), set, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("(18000 characters): at most 16384"), std::string::npos)
      << s.error_message().substr(0, 200);
  EXPECT_LT(s.error_message().size(), 200U);
  // Beyond the method's request size, the site does not parse it at all.
  set.set_value(std::string(100000, '1'));
  s = stub_->SetParameter(as("alice").get(), set, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("SetParameter request of 100034 bytes: at most 20480"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(status().task_name(), "door");

  // The task clock kept running through the accepted update.
  std::this_thread::sleep_for(100ms);
  const CycleTelemetry t = executor_->telemetry();
  EXPECT_EQ(t.state, ExecutorState::kRunning);
  EXPECT_GT(before, 0.0);
  EXPECT_GT(t.task_time, before);
  EXPECT_NEAR(t.wrench_error[3] + t.wrench[3], 12.0, 1e-9);
}

TEST_F(RemoteSiteServerTest, ResetIsRefusedWhileRunningAndAcceptedAfterAStop) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  ASSERT_TRUE(start("alice", "door").ok());
  wait_for(v1::EXECUTOR_STATE_RUNNING);
  v1::ResetReply reset;
  // A refused reset is an error status, not an OK answer that says "no".
  const grpc::Status refused = stub_->Reset(as("alice").get(), {}, &reset);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("nothing to reset"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(start("alice", "door").error_code(), grpc::StatusCode::OK);

  v1::StopReply stopped;
  ASSERT_TRUE(stub_->Stop(as("alice").get(), {}, &stopped).ok());
  EXPECT_EQ(start("alice", "door").error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(stub_->Reset(as("alice").get(), {}, &reset).ok());
  EXPECT_TRUE(reset.accepted()) << reset.message();
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_IDLE);
}

// A STOP on a site that has already stopped is acknowledged and changes nothing: the one
// reset after it brings the site back to IDLE, and a task starts (it used to take two).
TEST_F(RemoteSiteServerTest, AStopOnAStoppedSiteIsAcknowledgedAndOneResetIsEnough) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  ASSERT_TRUE(start("alice", "door").ok());
  wait_for(v1::EXECUTOR_STATE_RUNNING);
  v1::StopReply stopped;
  ASSERT_TRUE(stub_->Stop(as("alice").get(), {}, &stopped).ok());
  ASSERT_EQ(wait_for(v1::EXECUTOR_STATE_STOPPED).state(), v1::EXECUTOR_STATE_STOPPED);
  ASSERT_TRUE(stub_->Stop(as("bob").get(), {}, &stopped).ok());  // STOP again, by anyone
  EXPECT_EQ(stopped.state(), v1::EXECUTOR_STATE_STOPPED);
  v1::ResetReply reset;
  ASSERT_TRUE(stub_->Reset(as("alice").get(), {}, &reset).ok());
  EXPECT_TRUE(reset.accepted());
  std::this_thread::sleep_for(50ms);
  const v1::SiteStatus s = status();
  EXPECT_EQ(s.state(), v1::EXECUTOR_STATE_IDLE) << s.breach().description();
  EXPECT_TRUE(start("alice", "door").ok());
  EXPECT_EQ(wait_for(v1::EXECUTOR_STATE_RUNNING).state(), v1::EXECUTOR_STATE_RUNNING);
}

// Refusals reach the audit trail as what they are: a refused reset with its status code,
// an upload refused for the lease with the task it named.
TEST_F(RemoteSiteServerTest, RefusedResetsAndUploadsAreAuditedAsRefusedWithTheirTask) {
  ASSERT_TRUE(upload("alice", "door", shipped_task("door_force")).ok());
  v1::ResetReply reset;
  EXPECT_EQ(stub_->Reset(as("alice").get(), {}, &reset).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(upload("bob", "bobs_door", shipped_task("door_force")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::GetAuditRequest request;
  v1::GetAuditReply audit;
  ASSERT_TRUE(stub_->GetAudit(as("alice").get(), request, &audit).ok());
  bool reset_line = false, upload_line = false;
  for (const std::string& line : audit.lines()) {
    if (line.find("\"Reset\"") != std::string::npos) {
      reset_line = true;
      EXPECT_NE(line.find("FAILED_PRECONDITION: nothing to reset"), std::string::npos) << line;
    }
    if (line.find("\"UploadTask\"") != std::string::npos &&
        line.find("\"bob\"") != std::string::npos) {
      upload_line = true;
      EXPECT_NE(line.find("bobs_door"), std::string::npos) << line;
      EXPECT_NE(line.find("FAILED_PRECONDITION"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(reset_line);
  EXPECT_TRUE(upload_line);
}

// The lease's lapse is an event in the trail: written once, about 0.1 s after the lapse
// although nobody calls, naming the former holder and their silence. A holder's renewal
// (a console renews every 1.5 s) is not recorded; acquisitions are.
TEST_F(RemoteSiteServerTest, ALapsedLeaseIsAuditedOnceAndRenewalsAreNot) {
  const auto lines_with = [&](const std::string& call) {
    v1::GetAuditReply audit;
    EXPECT_TRUE(stub_->GetAudit(as("observer").get(), v1::GetAuditRequest{}, &audit).ok());
    std::vector<std::string> out;
    for (const std::string& line : audit.lines()) {
      if (line.find("\"call\":\"" + call + "\"") != std::string::npos) out.push_back(line);
    }
    return out;
  };
  v1::AcquireControlReply acquired;
  ASSERT_TRUE(stub_->AcquireControl(as("alice").get(), {}, &acquired).ok());
  ASSERT_TRUE(stub_->AcquireControl(as("alice").get(), {}, &acquired).ok());
  const auto renewed = std::chrono::steady_clock::now();
  std::vector<std::string> lapses;
  double written_after = -1.0;  // [s] since alice's last call
  while (std::chrono::steady_clock::now() - renewed < 3s) {
    lapses = lines_with("LeaseLapsed");
    if (!lapses.empty()) {
      written_after =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - renewed).count();
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(lapses.size(), 1u) << "no lapse in the trail 3 s after a 0.5 s lease went silent";
  EXPECT_GE(written_after, 0.5);
  EXPECT_LT(written_after, 1.0) << "the lapse (lease timeout 0.5 s) was written late";
  EXPECT_NE(lapses[0].find("\"identity\":\"alice\""), std::string::npos) << lapses[0];
  EXPECT_NE(lapses[0].find("no call from 'alice' for 0."), std::string::npos) << lapses[0];
  EXPECT_NE(lapses[0].find("(lease timeout 0.5 s): the lease lapsed"), std::string::npos)
      << lapses[0];
  EXPECT_EQ(status().controller(), "");

  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(lines_with("LeaseLapsed").size(), 1u) << "one lapse written twice";
  EXPECT_EQ(lines_with("AcquireControl").size(), 1u) << "alice's renewal was audited";
  ASSERT_TRUE(stub_->AcquireControl(as("bob").get(), {}, &acquired).ok());
  const std::vector<std::string> acquisitions = lines_with("AcquireControl");
  ASSERT_EQ(acquisitions.size(), 2u);
  EXPECT_NE(acquisitions[1].find("\"identity\":\"bob\""), std::string::npos) << acquisitions[1];
  EXPECT_EQ(lines_with("LeaseLapsed").size(), 1u);
}

// GetStatus reads the loop's own per-cycle publication: with 64 telemetry streams open (16
// identities × 4, the per-identity limit) the status is never more than 10 ms older than the
// call, and its cycle count keeps pace with the 1 kHz loop.
TEST_F(RemoteSiteServerTest, StatusIsTheLoopsOwnAtMost10msOldWith64TelemetryStreamsOpen) {
  struct Stream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReader<v1::Telemetry>> reader;
    std::thread thread;
  };
  std::vector<Stream> streams(64);
  std::atomic<std::uint64_t> received{0};
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& st = streams[i];
    st.context = as("watcher" + std::to_string(i / 4));
    st.context->set_deadline(std::chrono::system_clock::now() + 60s);
    v1::TelemetryRequest request;
    request.set_decimation(1);
    st.reader = stub_->StreamTelemetry(st.context.get(), request);
    st.thread = std::thread([&st, &received] {
      v1::Telemetry t;
      while (st.reader->Read(&t)) received.fetch_add(1, std::memory_order_relaxed);
    });
  }
  std::this_thread::sleep_for(500ms);
  const auto unix_now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  std::int64_t oldest = 0;
  const v1::SiteStatus first = status();
  const auto begin = std::chrono::steady_clock::now();
  int polls = 0;
  for (; std::chrono::steady_clock::now() - begin < 2s; ++polls) {
    const std::int64_t sent = unix_now();
    const v1::SiteStatus s = status();
    ASSERT_GT(s.timing().sample_unix_ns(), 0);
    oldest = std::max(oldest, sent - s.timing().sample_unix_ns());
    std::this_thread::sleep_for(20ms);
  }
  const v1::SiteStatus last = status();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  for (Stream& st : streams) st.context->TryCancel();
  for (Stream& st : streams) st.thread.join();
  std::printf(
      "64 telemetry streams: %llu samples received; status at most %.2f ms older than "
      "its call over %d polls; status cycles at %.0f per second\n",
      static_cast<unsigned long long>(received.load()), static_cast<double>(oldest) * 1e-6, polls,
      static_cast<double>(last.timing().cycles() - first.timing().cycles()) / seconds);
  EXPECT_GT(received.load(), 1000u);
  EXPECT_LE(oldest, 10'000'000) << "a status " << oldest * 1e-6 << " ms older than its call";
  const double rate =
      static_cast<double>(last.timing().cycles() - first.timing().cycles()) / seconds;
  EXPECT_GT(rate, 900.0) << "status cycles advanced at " << rate << " per second over " << polls
                         << " polls";
}

// The site says which scene its arm works in, with the geometry to draw it.
TEST_F(RemoteSiteServerTest, StatusCarriesTheScenesNameBodiesAndHinge) {
  const v1::SiteStatus s = status();
  EXPECT_EQ(s.scene().name(), "door");
  ASSERT_EQ(s.scene().joints_size(), 1);
  EXPECT_EQ(s.scene().joints(0).name(), "door_hinge");
  EXPECT_NEAR(std::abs(s.scene().joints(0).axis().z()), 1.0, 1e-6);  // a vertical hinge
  bool panel = false;
  for (const v1::SceneBody& b : s.scene().bodies()) {
    if (b.name() == "door_panel") {
      panel = true;
      EXPECT_EQ(b.joint(), "door_hinge");
      EXPECT_NEAR(b.size().z(), 0.45, 1e-9);  // half the 0.9 m panel
    }
  }
  EXPECT_TRUE(panel);
  const SceneDescription scene = proto::to_scene(s.scene(), "scene");
  EXPECT_EQ(scene.bodies.size(), static_cast<std::size_t>(s.scene().bodies_size()));
}

// A ground-side teleoperation session: writes increments at 1 kHz on one thread, reads
// force reflection on another.
class TeleopSession {
 public:
  // `datagrams`: asks for the datagram plane and waits for its keys in the initial metadata.
  TeleopSession(v1::RemoteSite::Stub& stub, const std::string& who, bool datagrams = false) {
    context_.AddMetadata("tether-operator", who);
    if (datagrams) context_.AddMetadata("tether-datagram", "1");
    stream_ = stub.Teleoperate(&context_);
    if (datagrams) {
      // Before the reader's first Read: the two may not run at once.
      stream_->WaitForInitialMetadata();
      const auto& metadata = context_.GetServerInitialMetadata();
      if (const auto it = metadata.find("tether-datagram-session"); it != metadata.end()) {
        datagram_keys_ =
            datagram::keys_from_text(std::string(it->second.data(), it->second.size()));
      }
      if (const auto it = metadata.find("tether-datagram-port"); it != metadata.end()) {
        datagram_port_ = std::stoi(std::string(it->second.data(), it->second.size()));
      }
    }
    reader_ = std::thread([this] {
      v1::ForceReflection r;
      while (stream_->Read(&r)) {
        std::lock_guard lock(mutex_);
        last_ = r;
        ++reflections_;
        if (r.applied_sequence() > 0 && r.ground_time_ns() > 0) echoed_ = true;
        peak_torque_ = std::max(peak_torque_, std::abs(r.measured().torque().x()));
        if (r.has_eye() && (eye_stamps_.empty() || eye_stamps_.back() != r.eye().time_ns())) {
          eye_stamps_.push_back(r.eye().time_ns());
        }
      }
    });
  }
  ~TeleopSession() {
    context_.TryCancel();
    if (reader_.joinable()) reader_.join();
  }

  bool send(std::uint64_t sequence, double rotation_x, bool deadman = true,
            v1::TeleopMode mode = v1::TELEOP_MODE_TOOL) {
    v1::TeleopIncrement in;
    in.set_sequence(sequence);
    in.set_ground_time_ns(now_ns());
    in.set_deadman(deadman);
    in.set_mode(mode);
    in.mutable_rotation_rad()->set_x(rotation_x);
    return stream_->Write(in);
  }
  void close() { stream_->WritesDone(); }
  grpc::Status finish() {
    stream_->WritesDone();
    if (reader_.joinable()) reader_.join();
    return stream_->Finish();
  }
  void cancel() { context_.TryCancel(); }
  v1::ForceReflection last() {
    std::lock_guard lock(mutex_);
    return last_;
  }
  int reflections() {
    std::lock_guard lock(mutex_);
    return reflections_;
  }
  bool echoed() {
    std::lock_guard lock(mutex_);
    return echoed_;
  }
  double peak_torque() {
    std::lock_guard lock(mutex_);
    return peak_torque_;
  }
  // The EYE frame stamps the camera-mode reflections reported, each once, in arrival order.
  std::vector<std::uint64_t> eye_stamps() {
    std::lock_guard lock(mutex_);
    return eye_stamps_;
  }
  const std::optional<datagram::SessionKeys>& datagram_keys() const { return datagram_keys_; }
  int datagram_port() const { return datagram_port_; }

 private:
  std::optional<datagram::SessionKeys> datagram_keys_;
  int datagram_port_ = -1;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::TeleopIncrement, v1::ForceReflection>> stream_;
  std::thread reader_;
  std::mutex mutex_;
  v1::ForceReflection last_;
  int reflections_ = 0;
  bool echoed_ = false;
  double peak_torque_ = 0.0;
  std::vector<std::uint64_t> eye_stamps_;
};

void pace(std::chrono::steady_clock::time_point& next) {
  next += 1ms;
  std::this_thread::sleep_until(next);
}

TEST_F(RemoteSiteServerTest, TeleoperationAppliesEveryIncrementOnceInOrderAndReflectsForce) {
  // About exactly-once delivery, not stall detection: under TSan a client paused 101 ms
  // once and the shipped 0.1 s stall bound stopped the task before its last increments.
  v1::TaskParameters task = shipped_task("door_shared");
  task.mutable_teleoperation()->set_stall_timeout_s(1.0);
  ASSERT_TRUE(upload("alice", "shared", task).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0));  // keeps the stream alive across the start
  ASSERT_TRUE(start("alice", "shared").ok());
  const double rate = 15.0 * kDegToRad;  // rad/s about the handle x axis
  auto next = std::chrono::steady_clock::now();
  std::uint64_t sequence = 1;
  int duplicates_sent = 0;
  for (int k = 0; k < 1500; ++k) {
    ++sequence;
    ASSERT_TRUE(session.send(sequence, rate * 1e-3));
    if (k % 100 == 50) {
      // A repeated and a stale increment: neither may be applied again.
      ASSERT_TRUE(session.send(sequence, rate * 1e-3));
      ASSERT_TRUE(session.send(sequence - 5, rate * 1e-3));
      duplicates_sent += 2;
    }
    pace(next);
  }
  // A starved loop may lag the stream; every increment still arrives, in order, once.
  const auto limit = std::chrono::steady_clock::now() + 2s;
  while (session.last().applied_sequence() < sequence && std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(2ms);
  }
  const v1::ForceReflection last = session.last();
  EXPECT_EQ(last.applied_sequence(), sequence);
  EXPECT_TRUE(session.echoed());
  EXPECT_EQ(last.mode(), v1::TELEOP_MODE_TOOL);
  EXPECT_EQ(last.state(), v1::EXECUTOR_STATE_RUNNING) << last.breach().description();
  EXPECT_EQ(last.teleoperation().lost(), 0u);
  EXPECT_EQ(last.teleoperation().duplicates(), static_cast<std::uint64_t>(duplicates_sent));
  // One per control cycle while the stream is open, a newer one replacing any not yet sent.
  EXPECT_GT(session.reflections(), 300);
  // The hinge resists: the reflected torque about the handle x axis is felt.
  EXPECT_GT(session.peak_torque(), 0.5);
  const double door_deg = executor_->telemetry().aux[0] * kRadToDeg;
  EXPECT_GT(door_deg, 10.0);
  EXPECT_LT(door_deg, 30.0);
}

TEST_F(RemoteSiteServerTest, AReleasedSwitchHoldsTheArmWithinOneControlPeriodAndEnablingResumes) {
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  std::uint64_t sequence = 1;
  for (int k = 0; k < 200; ++k) {
    ASSERT_TRUE(session.send(++sequence, 1e-4));
    pace(next);
  }
  const auto released = std::chrono::steady_clock::now();
  ASSERT_TRUE(session.send(++sequence, 1e-4, false));
  while (executor_->status().teleoperation.enabled &&
         std::chrono::steady_clock::now() - released < 500ms) {
    std::this_thread::sleep_for(100us);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - released).count();
  // Transport plus at most one control period plus polling.
  EXPECT_LT(seconds, 0.05);
  const std::uint64_t applied = executor_->status().teleoperation.applied;
  // Held, not stopped: the released samples are heartbeats that keep the stream alive past
  // the stall timeout and move nothing.
  for (int k = 0; k < 300; ++k) {
    ASSERT_TRUE(session.send(++sequence, 1e-4, false));
    pace(next);
  }
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_RUNNING) << status().breach().description();
  EXPECT_EQ(executor_->status().teleoperation.applied, applied);
  // Enabled again: the door turns on, with no reset.
  const double door_before = executor_->telemetry().aux[0];
  for (int k = 0; k < 300; ++k) {
    ASSERT_TRUE(session.send(++sequence, 1e-4));
    pace(next);
  }
  for (int k = 0; k < 100; ++k) {  // let the last ones play out
    ASSERT_TRUE(session.send(++sequence, 0.0));
    pace(next);
  }
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_RUNNING) << status().breach().description();
  EXPECT_GE(executor_->status().teleoperation.applied, applied + 290);
  EXPECT_GT(executor_->telemetry().aux[0] - door_before, 0.01);
}

TEST_F(RemoteSiteServerTest, AStreamThatEndsCleanlyLeavesTheTaskHoldingInsteadOfStalling) {
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t k = 2; k < 100; ++k) {
    ASSERT_TRUE(session.send(k, 1e-4));
    pace(next);
  }
  EXPECT_TRUE(session.finish().ok());
  // Well past the 0.1 s stall timeout: still running, the stream reported as ended.
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_RUNNING) << status().breach().description();
  EXPECT_TRUE(executor_->status().teleoperation.ended);
}

TEST_F(RemoteSiteServerTest, AClosedStreamReportsItsLastIncrementAppliedBeforeItEnds) {
  // The longest stall timeout: this test is about the end, and a sanitizer's pauses must
  // not end the task first.
  v1::TaskParameters task = shipped_task("door_shared");
  task.mutable_teleoperation()->set_stall_timeout_s(
      tether::find_field_rule("teleoperation.stall_timeout_s")->max);
  ASSERT_TRUE(upload("alice", "shared", task).ok());
  TeleopSession session(*stub_, "alice");
  // Sent before the start: stale (dropped at the task's first cycle, which may also catch
  // a few sent just after the call returned) or applied.
  ASSERT_TRUE(session.send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  std::uint64_t sequence = 1;
  for (int k = 0; k < 100; ++k) {
    ASSERT_TRUE(session.send(++sequence, 1e-4));
    pace(next);
  }
  // A burst, closed at once: these are still in flight when the ground's side closes.
  for (int k = 0; k < 30; ++k) ASSERT_TRUE(session.send(++sequence, 1e-4));
  EXPECT_TRUE(session.finish().ok());
  // The stream closed only after a reflection reported the last one applied, so the
  // ground's count is complete: every increment applied once, or dropped at the start.
  const v1::ForceReflection last = session.last();
  EXPECT_EQ(last.applied_sequence(), sequence);
  EXPECT_EQ(last.teleoperation().applied() + last.teleoperation().stale(), sequence);
  EXPECT_EQ(last.teleoperation().lost(), 0u);
  EXPECT_EQ(last.state(), v1::EXECUTOR_STATE_RUNNING) << last.breach().description();
}

TEST_F(RemoteSiteServerTest, LostGroundLinkStopsTheArm) {
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());
  auto session = std::make_unique<TeleopSession>(*stub_, "alice");
  ASSERT_TRUE(session->send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t k = 2; k < 100; ++k) {
    ASSERT_TRUE(session->send(k, 1e-4));
    pace(next);
  }
  const auto cut = std::chrono::steady_clock::now();
  session->cancel();
  const v1::SiteStatus s = wait_for(v1::EXECUTOR_STATE_STOPPING, 500ms);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  const v1::SiteStatus stopped = wait_for(v1::EXECUTOR_STATE_STOPPED);
  EXPECT_EQ(stopped.breach().cause(), v1::BREACH_CAUSE_GROUND_LINK_LOST)
      << stopped.breach().description();
  // Well before the 100 ms stall timeout would have caught it.
  EXPECT_LT(seconds, 0.08) << "state " << s.state();
}

TEST_F(RemoteSiteServerTest, StalledTeleoperationStreamStopsTheArm) {
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t k = 2; k < 300; ++k) {
    ASSERT_TRUE(session.send(k, 1e-4));
    pace(next);
  }
  const v1::SiteStatus s = wait_for(v1::EXECUTOR_STATE_STOPPED);
  EXPECT_EQ(s.breach().cause(), v1::BREACH_CAUSE_TELEOPERATION_STALLED);
  EXPECT_GT(s.breach().value(), 0.1);
  EXPECT_LE(s.breach().value(), 0.1 + 1.5e-3);
}

TEST_F(RemoteSiteServerTest, RefusesASecondTeleoperationStreamAndOtherOperators) {
  TeleopSession first(*stub_, "alice");
  ASSERT_TRUE(first.send(1, 0.0));
  std::this_thread::sleep_for(50ms);
  TeleopSession second(*stub_, "alice");
  const grpc::Status s = second.finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("already open"), std::string::npos);
  TeleopSession other(*stub_, "bob");
  EXPECT_EQ(other.finish().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(RemoteSiteServerTest, RejectsAnOversizedIncrementNamingFieldAndRange) {
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.5));
  const grpc::Status s = session.finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("rotation_rad"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("0.1 rad"), std::string::npos) << s.error_message();
}

// An increment that fails validation refuses the stream and stops the teleoperated arm on
// its own cause, not as the stall that the silence after it would otherwise report.
TEST_F(RemoteSiteServerTest, AnInvalidIncrementStopsTheArmNamingItAsTheCause) {
  ASSERT_TRUE(upload("alice", "shared", shipped_task("door_shared")).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0));
  ASSERT_TRUE(start("alice", "shared").ok());
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t k = 2; k < 50; ++k) {
    ASSERT_TRUE(session.send(k, 1e-4));
    pace(next);
  }
  session.send(50, 1e6);  // 1e6 rad in one sample
  EXPECT_EQ(session.finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const v1::SiteStatus s = wait_for(v1::EXECUTOR_STATE_STOPPED);
  EXPECT_EQ(s.breach().cause(), v1::BREACH_CAUSE_INVALID_INCREMENT) << s.breach().description();
}

TEST_F(RemoteSiteServerTest, AnswersStandardHealthChecksAndServerReflection) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("tether.v1.RemoteSite");
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(health->Check(&context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  // ServerReflectionRequest{list_services: ""} is field 7, length 0.
  const grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  grpc::ClientContext rcontext;
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel_.get(), method, &rcontext));
  const char list_services[] = {0x3a, 0x00};
  grpc::Slice slice(list_services, sizeof(list_services));
  grpc::ByteBuffer request_bytes(&slice, 1);
  ASSERT_TRUE(stream->Write(request_bytes));
  stream->WritesDone();
  grpc::ByteBuffer response_bytes;
  ASSERT_TRUE(stream->Read(&response_bytes));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response_bytes.Dump(&slices).ok());
  std::string text;
  for (const auto& piece : slices) {
    text.append(reinterpret_cast<const char*>(piece.begin()), piece.size());
  }
  EXPECT_NE(text.find("tether.v1.RemoteSite"), std::string::npos);
  EXPECT_NE(text.find("grpc.health.v1.Health"), std::string::npos);
  EXPECT_TRUE(stream->Finish().ok());
}

// ---- the teleoperation datagram plane ----

// A UDP socket on the loopback, as a ground (or someone on its path) would use.
class UdpSocket {
 public:
  UdpSocket() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) {
      ADD_FAILURE() << "cannot bind a UDP socket on the loopback";
    }
  }
  ~UdpSocket() { ::close(fd_); }
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  void send_to(int port, const std::vector<std::uint8_t>& bytes) const {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    EXPECT_EQ(
        ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
        static_cast<ssize_t>(bytes.size()));
  }
  // The next datagram within `limit`, or nothing.
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds limit) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(limit.count())) != 1) return {};
    std::vector<std::uint8_t> bytes(2048);
    const ssize_t n = ::recv(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT);
    if (n < 0) return {};
    bytes.resize(static_cast<std::size_t>(n));
    return bytes;
  }
  // Datagrams waiting now.
  int drain() const {
    int n = 0;
    while (receive(0ms)) ++n;
    return n;
  }

 private:
  int fd_ = -1;
};

// An increment datagram as the ground sends it: number `sequence` (numbered on the
// stream's base), the `segment_length`-th of its segment, the segment's rotation summed.
std::vector<std::uint8_t> increment_datagram(datagram::Sealer& sealer, std::uint32_t sequence,
                                             std::uint16_t segment_length, float rotation_sum) {
  datagram::IncrementMessage m;
  m.sequence = sequence;
  m.segment_length = segment_length;
  m.ground_time_ns = now_ns();
  m.deadman = true;
  m.mode = 1;  // TELEOP_MODE_TOOL
  m.motion[3] = rotation_sum;
  std::vector<std::uint8_t> payload(datagram::kMaxDatagram);
  payload.resize(datagram::encode(m, payload));
  std::vector<std::uint8_t> out(datagram::kMaxDatagram);
  out.resize(sealer.seal(payload, out));
  return out;
}

// Waits for a reflection datagram at `socket` that opens under the session's key and reports
// at least `applied` (the stream's numbering); false if none within `limit`.
bool reflection_reaches(const UdpSocket& socket, datagram::Opener& opener, std::uint32_t applied,
                        std::chrono::milliseconds limit = 1000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    const auto bytes = socket.receive(20ms);
    if (!bytes) continue;
    std::array<std::uint8_t, datagram::kMaxDatagram> plain{};
    const auto size = opener.open(*bytes, plain);
    if (!size) continue;
    datagram::ReflectionMessage r;
    if (!datagram::decode(std::span(plain.data(), *size), r).empty()) continue;
    if (r.applied_sequence >= applied) return true;
  }
  return false;
}

// Everything a datagram of the session's ground could be made into by someone on the path
// without its key moves nothing, and redirects nothing; the ground's own datagrams are taken
// once each, answered where they came from (following a NAT rebinding), and not at all once
// the stream that opened the session has ended.
TEST_F(RemoteSiteServerTest, DatagramPlaneForgedReplayedAndTamperedDatagramsMoveNothing) {
  v1::TaskParameters task = shipped_task("door_shared");
  // Forged datagrams are no heartbeats: the stall bound must outlast the attack below.
  task.mutable_teleoperation()->set_stall_timeout_s(
      tether::find_field_rule("teleoperation.stall_timeout_s")->max);
  ASSERT_TRUE(upload("alice", "shared", task).ok());
  TeleopSession session(*stub_, "alice", /*datagrams=*/true);
  ASSERT_TRUE(session.datagram_keys());
  ASSERT_EQ(session.datagram_port(), server_->datagram_port());
  const datagram::SessionKeys keys = *session.datagram_keys();
  const int port = session.datagram_port();
  ASSERT_TRUE(session.send(1, 0.0));  // on the stream: keeps it alive across the start
  ASSERT_TRUE(start("alice", "shared").ok());
  ASSERT_EQ(wait_for(v1::EXECUTOR_STATE_RUNNING).state(), v1::EXECUTOR_STATE_RUNNING);
  std::this_thread::sleep_for(50ms);  // the stream's increment played out (or stale)

  const TeleoperationCounters before = executor_->status().teleoperation;
  const JointVector joints = executor_->telemetry().measured_joints;
  datagram::Sealer ground(datagram::Kind::kIncrement, keys.session, keys.ground_to_remote);
  datagram::Opener reflections(datagram::Kind::kReflection, keys.session, keys.remote_to_ground);
  UdpSocket first;     // the ground
  UdpSocket attacker;  // someone else on the path, who sees the ground's datagrams
  UdpSocket rebound;   // the ground after its NAT rebound it to another port

  // The ground's next number, 2, sealed but withheld: the attacker has it first.
  const std::vector<std::uint8_t> valid = increment_datagram(ground, 2, 1, 1e-3F);
  // Paced: a burst larger than the socket's receive buffer would lose some on the loopback,
  // and the drop counts checked at the end are exact.
  int sent = 0;
  const auto attack = [&](const std::vector<std::uint8_t>& bytes) {
    attacker.send_to(port, bytes);
    if (++sent % 20 == 0) std::this_thread::sleep_for(1ms);
  };
  // (a) The session's id, but another key: large rotations, had they been taken.
  datagram::Key wrong = keys.ground_to_remote;
  wrong[0] ^= 1U;
  datagram::Sealer forger(datagram::Kind::kIncrement, keys.session, wrong);
  for (std::uint16_t n = 1; n <= 20; ++n) {
    attack(increment_datagram(forger, 1 + n, n, 0.05F * n));
  }
  // (b) The valid datagram with any one bit flipped: header, ciphertext or tag.
  for (std::size_t bit = 0; bit < valid.size() * 8; ++bit) {
    std::vector<std::uint8_t> flipped = valid;
    flipped[bit / 8] = static_cast<std::uint8_t>(flipped[bit / 8] ^ (1U << (bit % 8)));
    attack(flipped);
  }
  // (d) Cut short at every length, and with a huge counter (which must not move the window).
  for (std::size_t n = 0; n < valid.size(); ++n) {
    attack(std::vector<std::uint8_t>(valid.begin(), valid.begin() + n));
  }
  std::vector<std::uint8_t> far = valid;
  far[5] = far[6] = far[7] = far[8] = 0xFF;
  attack(far);
  std::this_thread::sleep_for(100ms);

  TeleoperationCounters after = executor_->status().teleoperation;
  EXPECT_EQ(after.last_received, before.last_received) << sent << " sent";
  EXPECT_EQ(after.applied, before.applied);
  EXPECT_EQ(after.lost, before.lost);
  EXPECT_NE(after.plane, DataPlane::kDatagram);
  EXPECT_LT((executor_->telemetry().measured_joints - joints).cwiseAbs().maxCoeff(), 1e-4);
  // Nothing learnt from them: no reflection goes to the attacker.
  EXPECT_EQ(attacker.drain(), 0);

  // The authentic one is taken, after all of those, and played on the datagram plane.
  first.send_to(port, valid);
  auto limit = std::chrono::steady_clock::now() + 1s;
  while (executor_->status().teleoperation.applied < before.applied + 1 &&
         std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(2ms);
  }
  after = executor_->status().teleoperation;
  EXPECT_EQ(after.last_received, before.last_received + 1);
  EXPECT_EQ(after.applied, before.applied + 1);
  EXPECT_EQ(after.plane, DataPlane::kDatagram);
  EXPECT_EQ(after.concealed, before.concealed);
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_RUNNING) << status().breach().description();
  // Its reflections come back as datagrams, to where it came from.
  EXPECT_TRUE(reflection_reaches(first, reflections, 2));

  // (c) Replayed, by the ground's address and by another: dropped, and no one is redirected.
  first.send_to(port, valid);
  attacker.send_to(port, valid);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(executor_->status().teleoperation.last_received, after.last_received);
  EXPECT_EQ(executor_->status().teleoperation.applied, after.applied);
  attacker.drain();  // (nothing should be there: checked next)
  EXPECT_TRUE(reflection_reaches(first, reflections, 2));
  EXPECT_EQ(attacker.drain(), 0);

  // The ground's NAT rebinds it: its next datagram comes from another port, and the
  // reflections follow it there and no longer go to the first.
  rebound.send_to(port, increment_datagram(ground, 3, 2, 2e-3F));
  EXPECT_TRUE(reflection_reaches(rebound, reflections, 3));
  first.drain();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(first.drain(), 0);
  EXPECT_GT(rebound.drain(), 20);  // one per control cycle while datagrams arrive
  EXPECT_EQ(executor_->status().teleoperation.applied, before.applied + 2);

  // (e) An authentic datagram held back on the path and relayed from elsewhere once a newer
  // one came: the window takes it (a reordering path does this), but only the newest moves
  // where reflections go, so they stay with the ground.
  const std::vector<std::uint8_t> held = increment_datagram(ground, 4, 3, 3e-3F);
  rebound.send_to(port, increment_datagram(ground, 5, 4, 4e-3F));
  EXPECT_TRUE(reflection_reaches(rebound, reflections, 5));
  attacker.drain();
  attacker.send_to(port, held);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(attacker.drain(), 0);
  EXPECT_TRUE(reflection_reaches(rebound, reflections, 5));

  // The ground ends the stream; the session ends with it: a datagram sealed under its key
  // afterwards is not taken, and no reflection answers it.
  const TeleoperationCounters ended = executor_->status().teleoperation;
  EXPECT_TRUE(session.finish().ok());
  rebound.drain();
  rebound.send_to(port, increment_datagram(ground, 6, 5, 5e-3F));
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(executor_->status().teleoperation.last_received, ended.last_received);
  EXPECT_EQ(executor_->status().teleoperation.applied, ended.applied);
  EXPECT_EQ(rebound.drain(), 0);
  EXPECT_EQ(status().state(), v1::EXECUTOR_STATE_RUNNING) << status().breach().description();

  // The audit trail counts each cause. Forged: 20 under the wrong key, 639 bit flips of the
  // counter, ciphertext or tag, 60 cuts that keep header and tag's length, the huge
  // counter. Replayed: the flip of counter 1 to 0, and the two replays. Malformed: the 4
  // flips of the kind. Flips of version or session and shorter cuts name no session of
  // ours: strays, as is the datagram after the end.
  v1::GetAuditReply audit;
  ASSERT_TRUE(stub_->GetAudit(as("alice").get(), v1::GetAuditRequest{}, &audit).ok());
  bool closed = false;
  for (const std::string& line : audit.lines()) {
    if (line.find("stream closed") == std::string::npos) continue;
    closed = true;
    EXPECT_NE(line.find("4 datagrams"), std::string::npos) << line;
    EXPECT_NE(line.find("datagrams dropped: 720 forged, 3 replayed, 4 malformed, 0 invalid"),
              std::string::npos)
        << line;
  }
  EXPECT_TRUE(closed);
}

// A cancelled stream (the ground vanished) ends its datagram session too: the ground's
// datagrams that arrive afterwards are answered by nothing and reach no queue.
TEST_F(RemoteSiteServerTest, DatagramPlaneSessionEndsWhenItsStreamIsCancelled) {
  auto session = std::make_unique<TeleopSession>(*stub_, "alice", /*datagrams=*/true);
  ASSERT_TRUE(session->datagram_keys());
  const datagram::SessionKeys keys = *session->datagram_keys();
  const int port = session->datagram_port();
  datagram::Sealer ground(datagram::Kind::kIncrement, keys.session, keys.ground_to_remote);
  datagram::Opener reflections(datagram::Kind::kReflection, keys.session, keys.remote_to_ground);
  UdpSocket socket;
  socket.send_to(port, increment_datagram(ground, 1, 1, 0.0F));
  EXPECT_TRUE(reflection_reaches(socket, reflections, 0));
  session->cancel();
  session.reset();  // the reader saw the stream end
  // The server's side ends shortly after the cancel reaches it.
  std::this_thread::sleep_for(200ms);
  socket.drain();
  for (std::uint32_t n = 2; n <= 20; ++n) {
    socket.send_to(port, increment_datagram(ground, n, static_cast<std::uint16_t>(n), 0.0F));
    std::this_thread::sleep_for(2ms);
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(socket.drain(), 0);
  // A new stream's session has other keys: the old ground's datagrams are strangers there.
  TeleopSession next(*stub_, "alice", /*datagrams=*/true);
  ASSERT_TRUE(next.datagram_keys());
  EXPECT_NE(next.datagram_keys()->session, keys.session);
  EXPECT_NE(next.datagram_keys()->ground_to_remote, keys.ground_to_remote);
  socket.send_to(port, increment_datagram(ground, 21, 21, 0.0F));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(socket.drain(), 0);
}

// The site as deployed: its audit trail on disk, each controlling call appended and fsync'd.
class RemoteSiteServerAuditedTest : public RemoteSiteServerTest {
 protected:
  void SetUp() override {
    audit_file_ = (std::filesystem::temp_directory_path() /
                   ("tether-eye-audit-" + std::to_string(::getpid()) + ".jsonl"))
                      .string();
    std::filesystem::remove(audit_file_);
    RemoteSiteServerTest::SetUp();
  }
  void TearDown() override {
    RemoteSiteServerTest::TearDown();
    std::filesystem::remove(audit_file_);
  }
};

// The cameras ride on an arm that pans while the operator works in camera mode: its EYE
// frame goes to the running task at 100 Hz for 2 s, frame and stamp in one SetParameter,
// from the operator who holds the teleoperation stream. None is refused; each is in force in
// the loop before the next is sent; and the camera-mode reflections report the frames in the
// order they were set, the last one with its rotation and stamp.
TEST_F(RemoteSiteServerAuditedTest, AMovingCamerasEyeFrameIsTakenAt100HzAndReportedWithTheForce) {
  v1::TaskParameters task = shipped_task("door_shared");
  task.mutable_teleoperation()->set_mode(v1::TELEOP_MODE_CAMERA);
  ASSERT_TRUE(upload("alice", "camera", task).ok());
  TeleopSession session(*stub_, "alice");
  ASSERT_TRUE(session.send(1, 0.0, true, v1::TELEOP_MODE_CAMERA));
  ASSERT_TRUE(start("alice", "camera").ok());
  // The hand holds still, enabled, every 2 ms: the stream stays alive beside the updates.
  std::atomic<bool> sending{true};
  std::atomic<bool> send_failed{false};
  std::thread hand([&] {
    std::uint64_t sequence = 1;
    auto next = std::chrono::steady_clock::now();
    while (sending.load()) {
      if (!session.send(++sequence, 0.0, true, v1::TELEOP_MODE_CAMERA)) send_failed = true;
      next += 2ms;
      std::this_thread::sleep_until(next);
    }
  });

  constexpr int kUpdates = 200;  // 2 s at 100 Hz
  const auto yaw_deg = [](int k) { return 0.5 * k; };
  int refused = 0;
  int followed = 0;  // updates in force in the loop when the next was sent
  std::uint64_t previous_stamp = 0;
  std::uint64_t last_stamp = 0;
  double slowest = 0.0;
  const auto begin = std::chrono::steady_clock::now();
  auto next = begin;
  for (int k = 1; k <= kUpdates; ++k) {
    if (previous_stamp != 0 && executor_->telemetry().eye_time_ns == previous_stamp) ++followed;
    const std::uint64_t stamp = now_ns();
    v1::SetParameterRequest set;
    set.set_path("teleoperation.world_R_eye");
    set.set_value("rpy { yaw_deg: " + std::to_string(yaw_deg(k)) + " }");
    v1::ParameterValue* more = set.add_more();
    more->set_path("teleoperation.eye_time_ns");
    more->set_value(std::to_string(stamp));
    v1::UpdateTaskReply reply;
    const auto called = std::chrono::steady_clock::now();
    const grpc::Status s = stub_->SetParameter(as("alice").get(), set, &reply);
    slowest = std::max(
        slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - called).count());
    if (!s.ok()) {
      ++refused;
      ADD_FAILURE() << "update " << k << ": " << s.error_message();
    }
    previous_stamp = last_stamp = stamp;
    next += 10ms;
    std::this_thread::sleep_until(next);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::this_thread::sleep_for(50ms);
  sending = false;
  hand.join();
  EXPECT_FALSE(send_failed.load());

  const double rate = kUpdates / seconds;
  std::cout << "EYE frame updates: " << rate << " per second, slowest call " << slowest * 1e3
            << " ms, " << followed << " of " << kUpdates - 1
            << " in force before the next was sent\n";
  EXPECT_EQ(refused, 0);
  // The rate is a figure (printed above), not an assertion: on a shared 2-core host a
  // sanitizer's instrumented calls measured 72-93 per second. What the operator relies on is
  // that each frame is in force before the next one is sent, whatever the pace.
  EXPECT_GE(followed, (kUpdates - 1) * 95 / 100);
  EXPECT_EQ(executor_->telemetry().state, ExecutorState::kRunning);
  EXPECT_EQ(executor_->telemetry().eye_time_ns, last_stamp);

  // The reflections name the frame their cycle used: in the order set, the newest last.
  const v1::ForceReflection last = session.last();
  EXPECT_EQ(last.mode(), v1::TELEOP_MODE_CAMERA);
  ASSERT_TRUE(last.has_eye());
  EXPECT_EQ(last.eye().time_ns(), last_stamp);
  const Matrix3 R = proto::to_rotation(last.eye().world_r_eye(), "eye.world_R_eye");
  const Matrix3 expected =
      Eigen::AngleAxisd(yaw_deg(kUpdates) * kDegToRad, Vector3::UnitZ()).toRotationMatrix();
  EXPECT_TRUE(R.isApprox(expected, 1e-9)) << R;
  const std::vector<std::uint64_t> stamps = session.eye_stamps();
  EXPECT_TRUE(std::is_sorted(stamps.begin(), stamps.end()));
  EXPECT_GE(stamps.size(), static_cast<std::size_t>(kUpdates * 9 / 10));
}

}  // namespace
}  // namespace tether::remote
