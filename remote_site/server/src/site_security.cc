#include "site_security.h"

#include <arpa/inet.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>

#include "durable_file.h"
#include "tether/tls/x509.h"

namespace tether::remote::server {

namespace {

constexpr const char* kDeclaredIdentityKey = "tether-operator";

struct MethodRole {
  std::string_view method;  // full name, or a service prefix ending in '/'
  Role role;
};

constexpr std::array<MethodRole, 22> kMethodRoles = {{
    {"/tether.v1.RemoteSite/GetStatus", Role::kObserver},
    {"/tether.v1.RemoteSite/StreamTelemetry", Role::kObserver},
    {"/tether.v1.RemoteSite/ListTasks", Role::kObserver},
    {"/tether.v1.RemoteSite/GetTask", Role::kObserver},
    {"/tether.v1.RemoteSite/GetAudit", Role::kObserver},
    {"/tether.v1.RemoteSite/WatchCamera", Role::kObserver},
    {"/tether.v1.RemoteSite/FetchBlackBox", Role::kOperator},
    {"/tether.v1.RemoteSite/AcquireControl", Role::kOperator},  // forced: kAdmin (handler)
    {"/tether.v1.RemoteSite/ReleaseControl", Role::kOperator},
    {"/tether.v1.RemoteSite/UploadTask", Role::kOperator},
    {"/tether.v1.RemoteSite/StartTask", Role::kOperator},
    {"/tether.v1.RemoteSite/Reset", Role::kOperator},
    {"/tether.v1.RemoteSite/Recover", Role::kOperator},
    {"/tether.v1.RemoteSite/AimCamera", Role::kOperator},
    {"/tether.v1.RemoteSite/UpdateTask", Role::kOperator},
    {"/tether.v1.RemoteSite/SetParameter", Role::kOperator},
    {"/tether.v1.RemoteSite/Teleoperate", Role::kOperator},
    {"/tether.v1.RemoteSite/DeleteTask", Role::kAdmin},
    // Stopping is never a privilege.
    {"/tether.v1.RemoteSite/Stop", Role::kNone},
    {"/grpc.health.v1.Health/", Role::kNone},
    {"/grpc.reflection.v1alpha.ServerReflection/", Role::kObserver},
    {"/grpc.reflection.v1.ServerReflection/", Role::kObserver},
}};

std::string host_of(std::string_view host_port) {
  if (!host_port.empty() && host_port.front() == '[') {
    const std::size_t close = host_port.find(']');
    return std::string(host_port.substr(1, close == std::string_view::npos ? 0 : close - 1));
  }
  return std::string(host_port.substr(0, host_port.rfind(':')));
}

// Refuses certificates on the CRL. gRPC calls it after OpenSSL has verified the chain and
// the validity period, so only revocation is left to check here.
class RevocationVerifier final : public grpc::experimental::ExternalCertificateVerifier {
 public:
  explicit RevocationVerifier(const SiteSecurity& security) : security_(security) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/, grpc::Status* sync_status) override {
    const std::string pem(request->peer_cert().data(), request->peer_cert().size());
    const std::string why = security_.revoked(pem);
    if (why.empty()) {
      *sync_status = grpc::Status::OK;
    } else {
      const std::string name(request->common_name().data(), request->common_name().size());
      spdlog::warn("TLS handshake refused: the certificate of '{}' is revoked ({})", name, why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                  "certificate of '" + name + "' is revoked: " + why);
    }
    return true;  // answered synchronously
  }

  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

 private:
  const SiteSecurity& security_;
};

// Authorises every call from its method before a handler runs, for tether's service and
// for gRPC's health and reflection services alike.
class MethodAuthoriser final : public grpc::AuthMetadataProcessor {
 public:
  explicit MethodAuthoriser(const SiteSecurity& security) : security_(security) {}

  // A refusal is audited (an fsync): run on gRPC's thread pool, not its event engine.
  bool IsBlocking() const override { return true; }

  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext* context,
                       OutputMetadata* /*consumed*/, OutputMetadata* /*response*/) override {
    const auto path = metadata.find(":path");
    const std::string method = path == metadata.end()
                                   ? std::string()
                                   : std::string(path->second.data(), path->second.size());
    Caller caller;
    for (const grpc::string_ref& value : context->FindPropertyValues("x509_common_name")) {
      caller.identity.assign(value.data(), value.size());
    }
    caller.authenticated = true;
    caller.role = security_.role_of(caller.identity);
    // A certificate revoked after its connection was made stops working at the next call.
    std::string pem;
    for (const grpc::string_ref& value : context->FindPropertyValues("x509_pem_cert")) {
      pem.assign(value.data(), value.size());
    }
    if (const std::string why = security_.revoked(pem); !why.empty()) {
      return refuse(
          caller, method,
          grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                       "the certificate of '" + caller.identity + "' is revoked: " + why));
    }
    const Role needed = required_role(method);
    if (caller.role >= needed) return grpc::Status::OK;
    return refuse(
        caller, method,
        grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                     "'" + caller.identity + "' (role " + to_string(caller.role) +
                         ") may not call " + method + ": it needs the role " + to_string(needed)));
  }

  grpc::Status refuse(const Caller& caller, const std::string& method, grpc::Status status) {
    spdlog::warn("refused: {}", status.error_message());
    if (security_.on_refusal) security_.on_refusal(caller, method, status);
    return status;
  }

 private:
  const SiteSecurity& security_;
};

}  // namespace

struct SiteSecurity::Configuration {
  RoleTable roles;
  tls::RevocationList revocations;
};

bool has_role(std::string_view full_method) {
  return std::any_of(kMethodRoles.begin(), kMethodRoles.end(), [&](const MethodRole& entry) {
    return entry.method.back() == '/' ? full_method.substr(0, entry.method.size()) == entry.method
                                      : full_method == entry.method;
  });
}

Role required_role(std::string_view full_method) {
  for (const MethodRole& entry : kMethodRoles) {
    if (entry.method.back() == '/' ? full_method.substr(0, entry.method.size()) == entry.method
                                   : full_method == entry.method) {
      return entry.role;
    }
  }
  return Role::kAdmin;
}

bool is_loopback(std::string_view host_port) {
  const std::string host = host_of(host_port);
  if (host == "localhost") return true;
  // Addresses only: a name such as "127.lab.example" resolves wherever DNS says.
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

SiteSecurity::SiteSecurity(const SecurityOptions& options, const std::string& address)
    : options_(options) {
  if (options_.insecure) {
    if (!is_loopback(address)) {
      throw std::runtime_error(
          "--insecure serves plaintext without authentication, so only on "
          "a loopback address (127.0.0.1, ::1, localhost), not '" +
          address + "'");
    }
    auto configuration = std::make_shared<Configuration>();
    configuration->roles =
        options_.roles.empty() ? RoleTable::everyone_admin() : RoleTable::load(options_.roles);
    configuration_ = std::move(configuration);
    spdlog::warn(
        "serving plaintext without authentication (--insecure): callers name "
        "themselves");
    return;
  }
  for (const auto& [value, name] :
       {std::pair{&options_.ca, "--ca"}, std::pair{&options_.cert, "--cert"},
        std::pair{&options_.key, "--key"}, std::pair{&options_.roles, "--roles"}}) {
    if (value->empty()) {
      throw std::runtime_error(std::string(name) +
                               " is required: the site serves mutual TLS (make a CA and "
                               "certificates with deploy/make-pki.sh), or pass --insecure on "
                               "loopback");
    }
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "tether-tls-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a private directory for the certificates in " +
                             std::filesystem::temp_directory_path().string());
  }
  staging_ = pattern;
  try {
    reload();
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(staging_, ignored);
    throw;
  }
}

SiteSecurity::~SiteSecurity() {
  if (staging_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(staging_, ignored);
}

std::string SiteSecurity::reload() {
  auto configuration = std::make_shared<Configuration>();
  configuration->roles = options_.roles.empty()
                             ? (options_.insecure ? RoleTable::everyone_admin() : RoleTable{})
                             : RoleTable::load(options_.roles);
  std::string summary = std::to_string(configuration->roles.size()) + " identities with roles";
  if (!options_.insecure) {
    const std::string ca = tls::read_file(options_.ca, "--ca");
    const std::string cert = tls::read_file(options_.cert, "--cert");
    const std::string key = tls::read_file(options_.key, "--key");
    tls::check_identity(ca, cert, key, options_.cert);
    if (!options_.crl.empty()) {
      configuration->revocations =
          tls::RevocationList::parse(tls::read_file(options_.crl, "--crl"), ca, options_.crl);
      summary += ", " + std::to_string(configuration->revocations.size()) + " revoked certificates";
    }
    // Key before certificate: gRPC reads the pair and re-reads the key to spot a change
    // between the two reads.
    write_file_durably(staging_ + "/ca.pem", ca);
    write_file_durably(staging_ + "/key.pem", key);
    write_file_durably(staging_ + "/cert.pem", cert);
    summary += ", site certificate '" + tls::common_name(cert) + "'";
  }
  {
    std::lock_guard lock(mutex_);
    configuration_ = std::move(configuration);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return summary;
}

std::string SiteSecurity::recheck(const Caller& caller, std::string_view method) const {
  if (caller.authenticated) {
    if (std::string why = revoked(caller.certificate); !why.empty()) {
      return "the certificate of '" + caller.identity + "' is revoked: " + why;
    }
  }
  const Role role = role_of(caller.identity);
  const Role needed = required_role(method);
  if (role < needed) {
    return "'" + caller.identity + "' (now role " + std::string(to_string(role)) +
           ") may no longer use " + std::string(method) + ": it needs the role " +
           to_string(needed);
  }
  return {};
}

std::shared_ptr<grpc::ServerCredentials> SiteSecurity::credentials() {
  if (options_.insecure) return grpc::InsecureServerCredentials();
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      staging_ + "/key.pem", staging_ + "/cert.pem", staging_ + "/ca.pem",
      static_cast<unsigned>(kCertificateRefresh.count()));
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_root_certs();
  tls.watch_identity_key_cert_pairs();
  tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  tls.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<RevocationVerifier>(*this));
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::experimental::TlsServerCredentials(tls);
  credentials->SetAuthMetadataProcessor(std::make_shared<MethodAuthoriser>(*this));
  return credentials;
}

Caller SiteSecurity::caller(const grpc::ServerContextBase& context) const {
  Caller caller;
  if (options_.insecure) {
    const auto& metadata = context.client_metadata();
    const auto it = metadata.find(kDeclaredIdentityKey);
    if (it != metadata.end()) caller.identity.assign(it->second.data(), it->second.size());
  } else {
    for (const grpc::string_ref& value :
         context.auth_context()->FindPropertyValues("x509_common_name")) {
      caller.identity.assign(value.data(), value.size());
    }
    for (const grpc::string_ref& value :
         context.auth_context()->FindPropertyValues("x509_pem_cert")) {
      caller.certificate.assign(value.data(), value.size());
    }
    caller.authenticated = !caller.identity.empty();
  }
  caller.role = role_of(caller.identity);
  return caller;
}

Role SiteSecurity::role_of(std::string_view identity) const {
  std::shared_ptr<const Configuration> configuration;
  {
    std::lock_guard lock(mutex_);
    configuration = configuration_;
  }
  return configuration->roles.role_of(identity);
}

std::string SiteSecurity::revoked(const std::string& certificate_pem) const {
  std::shared_ptr<const Configuration> configuration;
  {
    std::lock_guard lock(mutex_);
    configuration = configuration_;
  }
  return configuration->revocations.revoked(certificate_pem);
}

}  // namespace tether::remote::server
