#include "channel.h"

#include <stdexcept>

#include "tether/tls/x509.h"

namespace tether::local {

SiteChannel open_site_channel(const std::string& address, const ClientCredentials& credentials,
                              const std::string& declared_name) {
  SiteChannel site;
  if (credentials.insecure) {
    site.channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    site.identity = declared_name;
    site.insecure = true;
    return site;
  }
  if (credentials.ca.empty() || credentials.cert.empty() || credentials.key.empty()) {
    throw std::invalid_argument(
        "no credentials for " + address +
        ": give --ca, --cert and --key (or TETHER_CA, TETHER_CERT, TETHER_KEY, or a --config "
        "file; deploy/make-pki.sh makes them), or --insecure for a loopback site started "
        "--insecure");
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = tls::read_file(credentials.ca, "--ca");
  tls.pem_cert_chain = tls::read_file(credentials.cert, "--cert");
  tls.pem_private_key = tls::read_file(credentials.key, "--key");
  tls::check_identity(tls.pem_root_certs, tls.pem_cert_chain, tls.pem_private_key,
                      credentials.cert);
  site.identity = tls::common_name(tls.pem_cert_chain);
  grpc::ChannelArguments arguments;
  if (!credentials.server_name.empty()) {
    arguments.SetSslTargetNameOverride(credentials.server_name);
  }
  site.channel = grpc::CreateCustomChannel(address, grpc::SslCredentials(tls), arguments);
  return site;
}

}  // namespace tether::local
