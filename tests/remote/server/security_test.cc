// tether-remote --serve over mutual TLS as a real process, called as an outsider would with
// stubs generated from tether's own .proto files: the handshake refuses a missing, foreign,
// expired or revoked certificate on every RPC; every RPC refuses a role without the right;
// SIGHUP reloads roles, revocations and certificates; an admin takes the lease over; the
// audit trail records what was done; quotas hold a flooding identity to its share.
//
// Credentials: the test PKI (tests/support/make_test_pki.sh, the CTest fixture test_pki),
// copied per test so that revoking or re-issuing does not touch other tests.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tether/linkem/link_emulator.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::tether::testing::ChildProcess;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A person's credentials from a PKI directory (made by deploy/make-pki.sh); `ca_dir` is the
// PKI whose CA the client trusts for the site.
struct Person {
  std::string name;
  fs::path pki;
  bool with_certificate = true;
};

std::shared_ptr<grpc::ChannelCredentials> credentials(const Person& person,
                                                      const fs::path& ca_dir) {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = read_file(ca_dir / "ca.pem");
  if (person.with_certificate) {
    tls.pem_private_key = read_file(person.pki / "people" / (person.name + ".key"));
    tls.pem_cert_chain = read_file(person.pki / "people" / (person.name + ".pem"));
  }
  return grpc::SslCredentials(tls);
}

std::unique_ptr<grpc::ClientContext> context(std::chrono::milliseconds deadline = 3000ms) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + deadline);
  return c;
}

// Every RPC the site serves, each called with a request that does nothing to the arm when
// allowed (a missing task, no running task), and the least role it needs.
struct Rpc {
  const char* name;
  Role needed;
  std::function<grpc::Status(grpc::Channel&)> call;
};

template <typename Request, typename Reply>
std::function<grpc::Status(grpc::Channel&)> unary(
    grpc::Status (v1::RemoteSite::Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
    Request request) {
  return [method, request](grpc::Channel& channel) {
    auto stub = v1::RemoteSite::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
    Reply reply;
    return ((*stub).*method)(context().get(), request, &reply);
  };
}

std::vector<Rpc> every_rpc(const v1::TaskParameters& task) {
  v1::UploadTaskRequest upload;
  upload.set_name("probe");
  upload.set_replace(true);
  *upload.mutable_task() = task;
  v1::GetTaskRequest get;
  get.set_name("absent");
  v1::DeleteTaskRequest remove;
  remove.set_name("absent");
  v1::StartTaskRequest start;
  start.set_name("absent");
  v1::UpdateTaskRequest update;
  *update.mutable_task() = task;
  v1::SetParameterRequest set;
  set.set_path("impedance.damping.translation.x");
  set.set_value("300");
  v1::AimCameraRequest aim;
  aim.set_camera("stereo_left");
  using S = v1::RemoteSite::Stub;
  std::vector<Rpc> rpcs = {
      {"GetStatus", Role::kObserver, unary(&S::GetStatus, v1::GetStatusRequest{})},
      {"ListTasks", Role::kObserver, unary(&S::ListTasks, v1::ListTasksRequest{})},
      {"GetTask", Role::kObserver, unary(&S::GetTask, get)},
      {"GetAudit", Role::kObserver, unary(&S::GetAudit, v1::GetAuditRequest{})},
      {"AcquireControl", Role::kOperator, unary(&S::AcquireControl, v1::AcquireControlRequest{})},
      {"UploadTask", Role::kOperator, unary(&S::UploadTask, upload)},
      {"StartTask", Role::kOperator, unary(&S::StartTask, start)},
      {"Reset", Role::kOperator, unary(&S::Reset, v1::ResetRequest{})},
      {"UpdateTask", Role::kOperator, unary(&S::UpdateTask, update)},
      {"SetParameter", Role::kOperator, unary(&S::SetParameter, set)},
      {"AimCamera", Role::kOperator, unary(&S::AimCamera, aim)},
      {"ReleaseControl", Role::kOperator, unary(&S::ReleaseControl, v1::ReleaseControlRequest{})},
      {"DeleteTask", Role::kAdmin, unary(&S::DeleteTask, remove)},
      {"Stop", Role::kNone, unary(&S::Stop, v1::StopRequest{})},
  };
  rpcs.push_back(
      {"StreamTelemetry", Role::kObserver, [](grpc::Channel& channel) {
         auto stub =
             v1::RemoteSite::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
         auto c = context();
         v1::TelemetryRequest request;
         request.set_decimation(100);
         auto reader = stub->StreamTelemetry(c.get(), request);
         v1::Telemetry sample;
         if (reader->Read(&sample)) c->TryCancel();
         const grpc::Status status = reader->Finish();
         return status.error_code() == grpc::StatusCode::CANCELLED ? grpc::Status::OK : status;
       }});
  rpcs.push_back({"Teleoperate", Role::kOperator, [](grpc::Channel& channel) {
                    auto stub = v1::RemoteSite::NewStub(
                        std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
                    auto c = context();
                    auto stream = stub->Teleoperate(c.get());
                    stream->WritesDone();  // no increment: nothing to apply
                    v1::ForceReflection reflection;
                    while (stream->Read(&reflection)) {
                    }
                    return stream->Finish();
                  }});
  rpcs.push_back({"Health/Check", Role::kNone, [](grpc::Channel& channel) {
                    auto stub = grpc::health::v1::Health::NewStub(
                        std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
                    grpc::health::v1::HealthCheckRequest request;
                    request.set_service("tether.v1.RemoteSite");
                    grpc::health::v1::HealthCheckResponse response;
                    return stub->Check(context().get(), request, &response);
                  }});
  rpcs.push_back(
      {"ServerReflection", Role::kObserver, [](grpc::Channel& channel) {
         // ServerReflectionRequest{list_services: ""}: field 7, length 0.
         const grpc::internal::RpcMethod method(
             "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
             grpc::internal::RpcMethod::BIDI_STREAMING);
         auto c = context();
         std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
             grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
                 &channel, method, c.get()));
         const char list_services[] = {0x3a, 0x00};
         grpc::Slice slice(list_services, sizeof(list_services));
         grpc::ByteBuffer request(&slice, 1);
         stream->Write(request);
         stream->WritesDone();
         grpc::ByteBuffer response;
         while (stream->Read(&response)) {
         }
         return stream->Finish();
       }});
  return rpcs;
}

class SecureSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() /
            ("tether_security_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work_);
    fs::create_directories(work_);
    pki_ = work_ / "pki";
    fs::copy(TETHER_TEST_PKI, pki_, fs::copy_options::recursive);
    task_ = proto::from_task(
        proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_shared.textproto"));
  }
  void TearDown() override {
    if (remote_) {
      remote_->signal(SIGTERM);
      const int status = remote_->wait_for(5s);
      EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "tether-remote did not end cleanly on SIGTERM:\n"
          << log();
    }
    remote_.reset();
    fs::remove_all(work_);
  }

  // tether-remote over mutual TLS with the test PKI, the door scene, an audit file; `more`
  // arguments besides.
  void start_remote(std::vector<std::string> more = {}) {
    const std::string port_file = (work_ / "port").string();
    std::vector<std::string> args = {"--serve",     "127.0.0.1:0",
                                     "--port-file", port_file,
                                     "--scene",     "door",
                                     "--ca",        (pki_ / "ca.pem").string(),
                                     "--cert",      (pki_ / "sites/remote.pem").string(),
                                     "--key",       (pki_ / "sites/remote.key").string(),
                                     "--crl",       (pki_ / "crl.pem").string(),
                                     "--roles",     (pki_ / "roles.txt").string(),
                                     "--audit",     (work_ / "audit.jsonl").string()};
    args.insert(args.end(), more.begin(), more.end());
    remote_ =
        std::make_unique<ChildProcess>(TETHER_REMOTE_BINARY, args, (work_ / "remote.log").string());
    const int port = ::tether::testing::wait_for_port(*remote_, port_file, 20s);
    ASSERT_GT(port, 0) << "tether-remote did not report its port:\n" << log();
    address_ = "127.0.0.1:" + std::to_string(port);
  }

  Person person(const std::string& name) const { return Person{name, pki_}; }

  // A new channel (a new handshake) as `who`.
  std::shared_ptr<grpc::Channel> channel(const Person& who, const std::string& server_name = "",
                                         bool slow_reader = false) const {
    grpc::ChannelArguments arguments;
    if (slow_reader) {
      // A reader on a slow link: HTTP/2 flow control stops the site's writes after a
      // small window instead of gRPC buffering megabytes on this side.
      arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
      arguments.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 * 1024);
    }
    if (!server_name.empty()) arguments.SetSslTargetNameOverride(server_name);
    // Each channel its own connection: a refused handshake on one does not answer another.
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel(address_, credentials(who, pki_), arguments);
  }
  std::unique_ptr<v1::RemoteSite::Stub> stub(const Person& who) const {
    return v1::RemoteSite::NewStub(channel(who));
  }

  v1::SiteStatus status() const {
    v1::SiteStatus s;
    const grpc::Status st =
        stub(person("admin"))->GetStatus(context().get(), v1::GetStatusRequest{}, &s);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return s;
  }
  std::vector<std::string> stored_tasks() const {
    v1::ListTasksReply reply;
    stub(person("admin"))->ListTasks(context().get(), v1::ListTasksRequest{}, &reply);
    std::vector<std::string> names;
    for (const auto& t : reply.tasks()) names.push_back(t.name());
    return names;
  }
  std::string log() const { return read_file(work_ / "remote.log"); }
  std::vector<nlohmann::json> audit() const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(work_ / "audit.jsonl");
    std::string line;
    while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }
  void reload() {
    remote_->signal(SIGHUP);
    // The reload is logged once done.
    const auto end = std::chrono::steady_clock::now() + 5s;
    const std::size_t before = reloads_;
    while (std::chrono::steady_clock::now() < end) {
      std::size_t n = 0;
      for (std::size_t at = log().find("security reloaded"); at != std::string::npos;
           at = log().find("security reloaded", at + 1)) {
        ++n;
      }
      if (n > before) {
        reloads_ = n;
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    FAIL() << "no reload logged after SIGHUP:\n" << log();
  }
  void make_pki(const std::vector<std::string>& args) const {
    std::string command = "bash '" TETHER_SOURCE_DIR "/deploy/make-pki.sh'";
    for (const std::string& a : args) command += " '" + a + "'";
    ASSERT_EQ(std::system((command + " >/dev/null").c_str()), 0) << command;
  }

  static double joint_change(const v1::SiteStatus& a, const v1::SiteStatus& b) {
    double change = 0.0;
    const auto& qa = a.measured_joints().values();
    const auto& qb = b.measured_joints().values();
    for (int i = 0; i < qa.size() && i < qb.size(); ++i) {
      change = std::max(change, std::abs(qa[i] - qb[i]));
    }
    return change;
  }

  fs::path work_, pki_;
  v1::TaskParameters task_;
  std::unique_ptr<ChildProcess> remote_;
  std::string address_;
  std::size_t reloads_ = 0;
};

TEST_F(SecureSiteTest, EveryRpcRefusesARoleWithoutTheRightWithPermissionDeniedAndNothingMoves) {
  start_remote();
  const v1::SiteStatus before = status();
  for (const auto& [name, role] :
       {std::pair{"nobody", Role::kNone}, std::pair{"observer", Role::kObserver},
        std::pair{"operator", Role::kOperator}, std::pair{"admin", Role::kAdmin}}) {
    for (const Rpc& rpc : every_rpc(task_)) {
      SCOPED_TRACE(std::string(name) + " calls " + rpc.name);
      const grpc::Status result = rpc.call(*channel(person(name)));
      if (role >= rpc.needed) {
        EXPECT_NE(result.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << result.error_message();
        EXPECT_NE(result.error_code(), grpc::StatusCode::UNAVAILABLE) << result.error_message();
      } else {
        EXPECT_EQ(result.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << result.error_message();
        EXPECT_NE(result.error_message().find(std::string("'") + name + "'"), std::string::npos)
            << result.error_message();
      }
    }
    if (role < Role::kOperator) {
      // Nothing a role without the right asked for happened.
      EXPECT_TRUE(stored_tasks().empty()) << name;
    }
  }
  const v1::SiteStatus after = status();
  EXPECT_NE(after.state(), v1::EXECUTOR_STATE_RUNNING);
  EXPECT_LT(joint_change(before, after), 1e-4);
  // Refused controlling calls are audited, observing ones are not.
  int refused = 0;
  for (const auto& line : audit()) {
    if (line["outcome"].get<std::string>().rfind("PERMISSION_DENIED", 0) == 0) {
      ++refused;
      EXPECT_NE(line["identity"], "admin") << line.dump();
    }
  }
  // nobody: 9 operator calls and DeleteTask; observer: the same; operator: DeleteTask.
  EXPECT_EQ(refused, 21);
}

TEST_F(SecureSiteTest, HandshakeRefusesNoForeignExpiredOrRevokedCertificateOnEveryRpc) {
  start_remote();
  const v1::SiteStatus before = status();
  const Person no_certificate{"operator", pki_, false};
  const Person foreign{"stranger", pki_ / "other"};
  for (const Person& who : {no_certificate, foreign, person("expired"), person("revoked")}) {
    for (const Rpc& rpc : every_rpc(task_)) {
      SCOPED_TRACE(who.name + (who.with_certificate ? "" : " (no certificate)") + " calls " +
                   rpc.name);
      const grpc::Status result = rpc.call(*channel(who));
      EXPECT_EQ(result.error_code(), grpc::StatusCode::UNAVAILABLE) << result.error_message();
    }
  }
  // Refused at the handshake and logged; no handler ran, nothing was stored or moved.
  const std::string text = log();
  EXPECT_NE(text.find("Handshake failed"), std::string::npos) << text;
  EXPECT_NE(text.find("certificate of 'revoked' is revoked"), std::string::npos) << text;
  EXPECT_TRUE(audit().empty());
  EXPECT_TRUE(stored_tasks().empty());
  const v1::SiteStatus after = status();
  EXPECT_EQ(after.state(), v1::EXECUTOR_STATE_IDLE);
  EXPECT_LT(joint_change(before, after), 1e-4);
}

TEST_F(SecureSiteTest, SighupReloadsRolesRevocationsAndTheSiteCertificate) {
  start_remote();
  const auto operator_channel = channel(person("operator"));
  const auto bob_channel = channel(person("bob"));
  auto as_operator = v1::RemoteSite::NewStub(operator_channel);
  auto as_bob = v1::RemoteSite::NewStub(bob_channel);
  v1::ListTasksReply listed;
  ASSERT_TRUE(as_bob->ListTasks(context().get(), {}, &listed).ok());
  v1::AcquireControlReply acquired;
  ASSERT_TRUE(as_operator->AcquireControl(context().get(), {}, &acquired).ok());
  v1::ReleaseControlReply released;
  ASSERT_TRUE(as_operator->ReleaseControl(context().get(), {}, &released).ok());

  // The operator becomes an observer; bob is revoked; the site gets a certificate that
  // also names reloaded.example.
  {
    std::ofstream roles(pki_ / "roles.txt");
    roles << "operator observer\nadmin admin\n";
  }
  make_pki({"revoke", pki_.string(), "bob"});
  make_pki({"site", pki_.string(), "remote", "--san", "DNS:reloaded.example"});
  // Before the reload the new name is not the site's.
  {
    auto probe = v1::RemoteSite::NewStub(channel(person("admin"), "reloaded.example"));
    v1::SiteStatus s;
    EXPECT_EQ(probe->GetStatus(context().get(), {}, &s).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  reload();

  // On the connections made before the reload too.
  grpc::Status refused = as_operator->AcquireControl(context().get(), {}, &acquired);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  EXPECT_TRUE(as_operator->ListTasks(context().get(), {}, &listed).ok());
  refused = as_bob->ListTasks(context().get(), {}, &listed);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("revoked"), std::string::npos);
  // A new connection of bob's is refused at the handshake.
  EXPECT_EQ(stub(person("bob"))->ListTasks(context().get(), {}, &listed).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // gRPC takes up the staged certificate within its refresh interval (1 s).
  grpc::Status renamed;
  for (int attempt = 0; attempt < 40; ++attempt) {
    auto probe = v1::RemoteSite::NewStub(channel(person("admin"), "reloaded.example"));
    v1::SiteStatus s;
    renamed = probe->GetStatus(context().get(), {}, &s);
    if (renamed.ok()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(renamed.ok()) << renamed.error_message();

  // A bad roles file is refused whole; the previous roles stay.
  {
    std::ofstream roles(pki_ / "roles.txt");
    roles << "admin admin\noperator superuser\n";
  }
  remote_->signal(SIGHUP);
  std::this_thread::sleep_for(500ms);
  EXPECT_NE(log().find("roles.txt:2: role 'superuser': expected one of observer, operator, admin"),
            std::string::npos)
      << log();
  EXPECT_TRUE(stub(person("operator"))->ListTasks(context().get(), {}, &listed).ok());
}

TEST_F(SecureSiteTest, AReloadEndsTheOpenStreamsOfARevokedOrDemotedCaller) {
  start_remote();
  auto as_operator = stub(person("operator"));
  auto as_observer = stub(person("observer"));
  v1::AcquireControlReply acquired;
  ASSERT_TRUE(as_operator->AcquireControl(context().get(), {}, &acquired).ok());
  grpc::ClientContext teleop_context;
  auto teleop = as_operator->Teleoperate(&teleop_context);
  v1::ForceReflection reflection;
  ASSERT_TRUE(teleop->Read(&reflection));
  grpc::ClientContext telemetry_context;
  v1::TelemetryRequest request;
  request.set_decimation(10);
  auto telemetry = as_observer->StreamTelemetry(&telemetry_context, request);
  v1::Telemetry sample;
  ASSERT_TRUE(telemetry->Read(&sample));

  // While the stream holds the lease, releasing it beside the stream is refused.
  v1::ReleaseControlReply released;
  const grpc::Status refused = as_operator->ReleaseControl(context().get(), {}, &released);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();

  // The operator's certificate is revoked and the observer loses their role.
  make_pki({"revoke", pki_.string(), "operator"});
  {
    std::ofstream roles(pki_ / "roles.txt");
    roles << "admin admin\n";
  }
  reload();
  while (teleop->Read(&reflection)) {
  }
  const grpc::Status teleop_end = teleop->Finish();
  EXPECT_EQ(teleop_end.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << teleop_end.error_message();
  EXPECT_NE(teleop_end.error_message().find("revoked"), std::string::npos);
  while (telemetry->Read(&sample)) {
  }
  const grpc::Status telemetry_end = telemetry->Finish();
  EXPECT_EQ(telemetry_end.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << telemetry_end.error_message();
  // The lease went with the stream: the arm is free for another operator.
  EXPECT_EQ(status().controller(), "");
}

TEST_F(SecureSiteTest, AnAdminTakesTheLeaseOverTheHolderIsToldAndItIsAudited) {
  start_remote();
  auto as_operator = stub(person("operator"));
  auto as_admin = stub(person("admin"));
  auto as_bob = stub(person("bob"));
  v1::AcquireControlReply acquired;
  ASSERT_TRUE(as_operator->AcquireControl(context().get(), {}, &acquired).ok());
  grpc::ClientContext stream_context;
  auto stream = as_operator->Teleoperate(&stream_context);
  v1::ForceReflection reflection;
  ASSERT_TRUE(stream->Read(&reflection)) << "no force reflection on the open stream";

  // Only an admin may force.
  v1::AcquireControlRequest force;
  force.set_force(true);
  grpc::Status refused = as_bob->AcquireControl(context().get(), force, &acquired);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  ASSERT_TRUE(as_admin->AcquireControl(context().get(), force, &acquired).ok());
  EXPECT_EQ(acquired.controller(), "admin");

  // The holder's stream ends, naming who took over; its next controlling call is refused.
  while (stream->Read(&reflection)) {
  }
  const grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::ABORTED) << ended.error_message();
  EXPECT_NE(ended.error_message().find("'admin'"), std::string::npos) << ended.error_message();
  v1::UploadTaskRequest upload;
  upload.set_name("door");
  *upload.mutable_task() = task_;
  v1::UploadTaskReply uploaded;
  refused = as_operator->UploadTask(context().get(), upload, &uploaded);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("'admin'"), std::string::npos) << refused.error_message();

  bool audited = false;
  for (const auto& line : audit()) {
    if (line["call"] == "AcquireControl" && line["identity"] == "admin" &&
        line["role"] == "admin" && line["outcome"] == "OK") {
      audited = line.value("detail", "").find("taken over from 'operator'") != std::string::npos;
    }
  }
  EXPECT_TRUE(audited) << read_file(work_ / "audit.jsonl");
}

TEST_F(SecureSiteTest, TheAuditTrailRecordsControllingCallsStopsBreachesAndStreams) {
  start_remote();
  auto as_operator = stub(person("operator"));
  v1::UploadTaskRequest upload;
  upload.set_name("door");
  *upload.mutable_task() = task_;
  // Force control pushing 18 N·m on the door, with a force bound of 1 N that the contact
  // passes at once: a breach.
  v1::UploadTaskRequest breaching;
  breaching.set_name("breach");
  *breaching.mutable_task() = proto::from_task(
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_force.textproto"));
  breaching.mutable_task()->mutable_bounds()->set_max_force_n(1.0);
  v1::UploadTaskReply uploaded;
  ASSERT_TRUE(as_operator->UploadTask(context().get(), upload, &uploaded).ok());
  const grpc::Status breaching_uploaded =
      as_operator->UploadTask(context().get(), breaching, &uploaded);
  ASSERT_TRUE(breaching_uploaded.ok()) << breaching_uploaded.error_message();
  {
    grpc::ClientContext stream_context;
    auto stream = as_operator->Teleoperate(&stream_context);
    v1::ForceReflection reflection;
    ASSERT_TRUE(stream->Read(&reflection));
    stream->WritesDone();
    while (stream->Read(&reflection)) {
    }
    stream->Finish();
  }
  v1::StartTaskRequest start;
  start.set_name("breach");
  v1::StartTaskReply started;
  ASSERT_TRUE(as_operator->StartTask(context().get(), start, &started).ok());
  for (int i = 0; i < 200 && status().state() == v1::EXECUTOR_STATE_RUNNING; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  v1::StopReply stopped;
  ASSERT_TRUE(stub(person("observer"))->Stop(context().get(), {}, &stopped).ok());

  // The stream's closing line is written when the server sees the stream end, which may come
  // after the calls above on a loaded machine: wait for it (up to 2 s) before reading.
  const auto stream_lines_in = [](const std::vector<nlohmann::json>& trail) {
    int n = 0;
    for (const auto& line : trail) n += line["call"] == "Teleoperate" ? 1 : 0;
    return n;
  };
  std::vector<nlohmann::json> lines = audit();
  for (int i = 0; i < 200 && stream_lines_in(lines) < 2; ++i) {
    std::this_thread::sleep_for(10ms);
    lines = audit();
  }
  const auto find = [&](const std::string& call, const std::string& identity) {
    for (const auto& line : lines) {
      if (line["call"] == call && line["identity"] == identity) return line;
    }
    return nlohmann::json();
  };
  const nlohmann::json upload_line = find("UploadTask", "operator");
  ASSERT_FALSE(upload_line.is_null()) << read_file(work_ / "audit.jsonl");
  for (const char* key :
       {"time", "identity", "role", "authenticated", "call", "task", "revision", "outcome"}) {
    EXPECT_TRUE(upload_line.contains(key)) << key << " in " << upload_line.dump();
  }
  EXPECT_EQ(upload_line["role"], "operator");
  EXPECT_EQ(upload_line["authenticated"], true);
  EXPECT_EQ(upload_line["task"], "door");
  EXPECT_EQ(upload_line["revision"], 1);
  const nlohmann::json start_line = find("StartTask", "operator");
  EXPECT_EQ(start_line["task"], "breach");
  const nlohmann::json breach_line = find("Breach", "site");
  ASSERT_FALSE(breach_line.is_null()) << read_file(work_ / "audit.jsonl");
  EXPECT_EQ(breach_line["task"], "breach");
  EXPECT_NE(breach_line["detail"].get<std::string>().find("force"), std::string::npos)
      << breach_line.dump();
  EXPECT_EQ(find("Stop", "observer")["outcome"], "OK");
  // The stream: at its opening and its end, with its counts, not per increment.
  EXPECT_EQ(stream_lines_in(lines), 2);
  EXPECT_NE(find("Teleoperate", "operator").dump().find("stream opened"), std::string::npos);

  // The same trail over the RPC, to an observer.
  v1::GetAuditReply reply;
  ASSERT_TRUE(stub(person("observer"))->GetAudit(context().get(), {}, &reply).ok());
  ASSERT_EQ(static_cast<std::size_t>(reply.lines_size()), lines.size());
  EXPECT_EQ(nlohmann::json::parse(reply.lines(0)), lines.front());
}

TEST_F(SecureSiteTest, QuotasRefuseStreamsBeyondTheLimitUploadsBeyondTheRateAndBigRequests) {
  start_remote();
  auto as_observer = stub(person("observer"));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::Telemetry>>> streams;
  v1::TelemetryRequest request;
  request.set_decimation(10);
  for (int i = 0; i < 5; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    streams.push_back(as_observer->StreamTelemetry(contexts.back().get(), request));
    v1::Telemetry sample;
    const bool read = streams.back()->Read(&sample);
    if (i < 4) {
      EXPECT_TRUE(read) << "stream " << i << " within the quota";
    } else {
      EXPECT_FALSE(read);
      const grpc::Status refused = streams.back()->Finish();
      EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_NE(refused.error_message().find("at most 4 per identity"), std::string::npos)
          << refused.error_message();
      streams.pop_back();
    }
  }
  // Another identity is not affected.
  {
    grpc::ClientContext c;
    auto other = stub(person("operator"))->StreamTelemetry(&c, request);
    v1::Telemetry sample;
    EXPECT_TRUE(other->Read(&sample));
    c.TryCancel();
    other->Finish();
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    contexts[i]->TryCancel();
    streams[i]->Finish();
  }

  // Uploads: a burst of 10, then 2 per second.
  auto as_operator = stub(person("operator"));
  v1::UploadTaskRequest upload;
  upload.set_replace(true);
  *upload.mutable_task() = task_;
  v1::UploadTaskReply uploaded;
  int accepted = 0;
  grpc::Status refused;
  for (int i = 0; i < 12; ++i) {
    upload.set_name("door" + std::to_string(i));
    refused = as_operator->UploadTask(context().get(), upload, &uploaded);
    accepted += refused.ok() ? 1 : 0;
  }
  EXPECT_GE(accepted, 10);
  EXPECT_LE(accepted, 11);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("faster than 2 per second"), std::string::npos)
      << refused.error_message();

  // A request beyond its method's size.
  v1::GetTaskRequest get;
  get.set_name(std::string(8000, 'x'));
  v1::GetTaskReply got;
  refused = as_operator->GetTask(context().get(), get, &got);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("GetTask request of"), std::string::npos)
      << refused.error_message();
  // Beyond any method's: gRPC refuses it before tether reads it.
  get.set_name(std::string(600 * 1024, 'x'));
  refused = as_operator->GetTask(context().get(), get, &got);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// Cycles the loop missed while the operator ran the door task for `seconds`.
std::uint64_t overruns_while_running(v1::RemoteSite::Stub& as_operator, double seconds) {
  v1::SiteStatus s;
  as_operator.GetStatus(context().get(), {}, &s);
  const std::uint64_t before = s.timing().overruns();
  v1::StartTaskRequest start;
  start.set_name("door");
  v1::StartTaskReply started;
  EXPECT_TRUE(as_operator.StartTask(context().get(), start, &started).ok());
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  v1::StopReply stopped;
  as_operator.Stop(context().get(), {}, &stopped);
  // The stop ramps over the task's 0.3 s of loop time, longer in wall time on a loaded host;
  // a reset before it ends is refused, so try until one is taken (the next start needs it).
  v1::ResetReply reset;
  for (int i = 0; i < 20 && !reset.accepted(); ++i) {
    std::this_thread::sleep_for(300ms);
    as_operator.Reset(context().get(), {}, &reset);
  }
  EXPECT_TRUE(reset.accepted()) << reset.message();
  as_operator.GetStatus(context().get(), {}, &s);
  return s.timing().overruns() - before;
}

TEST_F(SecureSiteTest, AFloodAtTheQuotaLimitGainsTheLoopNoOverrunsAndSlowReadersLoseSamples) {
  start_remote();
  auto as_operator = stub(person("operator"));
  v1::UploadTaskRequest upload;
  upload.set_name("door");
  // Force control alone: nothing in the task needs the operator's hand. A quarter of the
  // shipped torque opens the door slowly enough that two 3-s runs (at 4/80 rad/s) stay clear
  // of the joint-limit margins the door's arc reaches.
  TaskParameters door =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_force.textproto");
  door.force_control.reference_wrench[3] = 4.0;
  *upload.mutable_task() = proto::from_task(door);
  v1::UploadTaskReply uploaded;
  ASSERT_TRUE(as_operator->UploadTask(context().get(), upload, &uploaded).ok());
  const std::uint64_t baseline = overruns_while_running(*as_operator, 3.0);

  // The observer floods at its limits: every stream it may open at full rate, never read
  // (the slowest consumer), and status and list calls as fast as the site answers.
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::Telemetry>>> streams;
  auto as_observer = v1::RemoteSite::NewStub(channel(person("observer"), "", true));
  v1::TelemetryRequest every_cycle;
  every_cycle.set_decimation(1);
  for (int i = 0; i < 4; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    streams.push_back(as_observer->StreamTelemetry(contexts.back().get(), every_cycle));
  }
  std::vector<std::thread> flood;
  for (int t = 0; t < 2; ++t) {
    flood.emplace_back([&] {
      auto own = stub(person("observer"));
      while (!stop.load()) {
        v1::SiteStatus s;
        v1::ListTasksReply l;
        if (own->GetStatus(context().get(), {}, &s).ok()) answered.fetch_add(1);
        if (own->ListTasks(context().get(), {}, &l).ok()) answered.fetch_add(1);
      }
    });
  }
  const std::uint64_t flooded = overruns_while_running(*as_operator, 3.0);
  stop.store(true);
  for (std::thread& t : flood) t.join();

  // The slow readers lost samples, counted in what they get.
  std::uint64_t dropped = 0;
  v1::Telemetry sample;
  for (int n = 0; n < 20000 && streams[0]->Read(&sample); ++n) {
    dropped = std::max<std::uint64_t>(dropped, sample.dropped_samples());
    if (dropped > 0) break;
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    contexts[i]->TryCancel();
    streams[i]->Finish();
  }
  std::printf(
      "loop overruns over 3 s of the door task: %llu unloaded, %llu flooded (%d calls "
      "answered, %llu samples dropped for one slow reader)\n",
      static_cast<unsigned long long>(baseline), static_cast<unsigned long long>(flooded),
      answered.load(), static_cast<unsigned long long>(dropped));
  EXPECT_GT(answered.load(), 100);
  EXPECT_GT(dropped, 0U);
  // A flood that reached the loop (a lock or a thread shared with the streams) would cost it
  // a large share of its 3000 deadlines. A handful either way is the host: the 2-core VM
  // pauses a process now and then and ctest runs two tests at once, so the comparison of
  // counts is a figure, and the bound is 1 % of the cycles.
  EXPECT_LE(flooded, baseline + 30) << "the flood cost the loop deadlines";
}

TEST_F(SecureSiteTest, MutualTlsPassesThroughTheLinkEmulatorCheckingTheSitesName) {
  start_remote();
  linkem::LinkProfile profile;
  profile.up.delay = 0.050;
  profile.down.delay = 0.050;
  linkem::LinkEmulator link("127.0.0.1:0", address_, profile);
  const std::string proxy = "127.0.0.1:" + std::to_string(link.port());
  const auto through = [&](const std::string& server_name) {
    grpc::ChannelArguments arguments;
    arguments.SetSslTargetNameOverride(server_name);
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return v1::RemoteSite::NewStub(
        grpc::CreateCustomChannel(proxy, credentials(person("observer"), pki_), arguments));
  };
  // The site's certificate names "remote": reached by the proxy's address, checked by name.
  auto good = through("remote");
  v1::SiteStatus s;
  ASSERT_TRUE(good->GetStatus(context(5000ms).get(), {}, &s).ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(good->GetStatus(context(5000ms).get(), {}, &s).ok());
  const double round_trip =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(round_trip, 0.099) << "the call did not cross the delayed link";
  EXPECT_GT(link.statistics().up.bytes, 0U);
  // A name the certificate does not carry is refused by the client.
  EXPECT_EQ(through("impostor.example")->GetStatus(context(5000ms).get(), {}, &s).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(SecureSiteStartTest, RefusesToServeWithoutCertificatesOrPlaintextOffLoopback) {
  const fs::path log =
      fs::temp_directory_path() / ("tether_security_start_" + std::to_string(::getpid()) + ".log");
  {
    ChildProcess remote(TETHER_REMOTE_BINARY, {"--serve", "127.0.0.1:0"}, log.string());
    const int status = remote.wait_for(20s);
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0);
    EXPECT_NE(read_file(log).find("--ca is required"), std::string::npos) << read_file(log);
  }
  {
    ChildProcess remote(TETHER_REMOTE_BINARY, {"--serve", "0.0.0.0:0", "--insecure"}, log.string());
    const int status = remote.wait_for(20s);
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0);
    EXPECT_NE(read_file(log).find("only on a loopback address"), std::string::npos)
        << read_file(log);
  }
  {
    // A name that merely starts like a loopback address is not one.
    ChildProcess remote(TETHER_REMOTE_BINARY, {"--serve", "127.lab.example:0", "--insecure"},
                        log.string());
    const int status = remote.wait_for(20s);
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0);
    EXPECT_NE(read_file(log).find("only on a loopback address"), std::string::npos)
        << read_file(log);
  }
  fs::remove(log);
}

}  // namespace
}  // namespace tether::remote
