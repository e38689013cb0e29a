#pragma once

// Who is calling and what they may do: the remote site's mutual TLS, its identities and
// roles (tether::Role, from the roles file), and the revocation list.
//
// Secure (the default): every connection is TLS and must present a client certificate
// issued by the configured CA, unexpired and not revoked by the configured CRL; anything
// else is refused at the handshake and logged, before any handler runs. A caller's
// identity is its certificate's subject common name. Every call is authorised from its
// method (required_role) before its handler runs: a role short of the method's gets
// PERMISSION_DENIED, also for the health and reflection services.
//
// Insecure (--insecure, loopback addresses only): plaintext, and the identity is whatever
// the caller writes into the "tether-operator" metadata. Without a roles file everyone is
// an admin there, as on a developer's machine.
//
// reload() (SIGHUP) re-reads the roles file, the CRL and the certificates. A file with an
// error is reported and the previous configuration stays in force. New certificates reach
// gRPC through private copies that change only on reload, so a half-written file is never
// loaded; gRPC picks them up within kCertificateRefresh.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "roles_file.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/server/remote_site_server.h"

namespace tether::remote::server {

// How often gRPC looks at the private certificate copies (its smallest interval).
inline constexpr std::chrono::seconds kCertificateRefresh{1};

// The role a method needs, by its full gRPC name ("/tether.v1.RemoteSite/StartTask"). A
// method not named here needs kAdmin: a method added to the service later is closed until
// it is given a role (the server also refuses to start if a RemoteSite method has none).
Role required_role(std::string_view full_method);
// Whether the table names `full_method` (or its service).
bool has_role(std::string_view full_method);

// True for 127.0.0.0/8, ::1 and "localhost" (HOST of HOST:PORT, brackets allowed).
bool is_loopback(std::string_view host_port);

struct Caller {
  std::string identity;  // certificate CN (secure) or declared name (insecure)
  Role role = Role::kNone;
  bool authenticated = false;  // identity proven by a certificate
  std::string certificate;     // its PEM (secure): rechecked by open streams on a reload
};

class SiteSecurity {
 public:
  // Reads and checks every file; throws std::runtime_error naming the file and the
  // problem, or refusing --insecure on a non-loopback `address`.
  SiteSecurity(const SecurityOptions& options, const std::string& address);
  ~SiteSecurity();
  SiteSecurity(const SiteSecurity&) = delete;
  SiteSecurity& operator=(const SiteSecurity&) = delete;

  bool insecure() const { return options_.insecure; }
  std::shared_ptr<grpc::ServerCredentials> credentials();

  Caller caller(const grpc::ServerContextBase& context) const;
  Role role_of(std::string_view identity) const;
  // Why `certificate_pem` is revoked, or "" (the handshake's verifier).
  std::string revoked(const std::string& certificate_pem) const;

  // Called for every call refused before its handler (role too low, certificate revoked
  // since the connection was made), from gRPC's thread. Set before credentials().
  std::function<void(const Caller& caller, const std::string& method, const grpc::Status&)>
      on_refusal;

  // Counts reloads: an open stream compares it each cycle and rechecks its caller (still
  // not revoked, still the role the method needs) when it moves.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Why `caller` may no longer use `method` (revoked, or its role now short of it); "" when
  // it still may.
  std::string recheck(const Caller& caller, std::string_view method) const;

  // Re-reads roles, CRL and certificates; returns what is now in force. Throws
  // std::runtime_error (and keeps the previous configuration) when any file is bad.
  std::string reload();

  struct Configuration;  // roles and revocations in force (site_security.cc)

 private:
  void stage_certificates();

  SecurityOptions options_;
  std::string staging_;  // private directory of the certificate copies gRPC watches
  mutable std::mutex mutex_;
  std::shared_ptr<const Configuration> configuration_;
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace tether::remote::server
