#pragma once

// The one place the ground opens a gRPC channel to a remote site, so every call and stream
// is secured alike (mutual TLS unless explicitly insecure).

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "tether/local/link/remote_site_client.h"

namespace tether::local {

struct SiteChannel {
  std::shared_ptr<grpc::Channel> channel;
  std::string identity;  // the certificate's CN; with insecure, `declared_name`
  bool insecure = false;
};

// Reads the credentials' files and opens the channel (lazily connecting). Throws
// std::runtime_error naming a missing or bad file, or std::invalid_argument when neither
// certificates nor `insecure` are given.
SiteChannel open_site_channel(const std::string& address, const ClientCredentials& credentials,
                              const std::string& declared_name);

}  // namespace tether::local
