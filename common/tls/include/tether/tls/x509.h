#pragma once

// X.509 certificates, keys and revocation lists as the sites use them (PEM text in,
// plain values out; OpenSSL stays behind this header).
//
// Identity: tether names a caller by its certificate's subject common name (CN). The CA of
// a site issues every certificate it accepts, so within a site a CN names one person or
// program; the roles file maps CNs to roles.
//
// Every function that fails throws std::runtime_error naming the file (or "certificate"),
// what was wrong and, for OpenSSL's reasons, OpenSSL's text.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tether::tls {

// The whole file; throws when it cannot be read or is empty.
std::string read_file(const std::string& path, const char* what);

// A PEM certificate's subject common name ("" when it has none).
std::string common_name(const std::string& certificate_pem);

// Checks that `certificate_pem` (the first certificate, a chain may follow) parses, that
// `key_pem` is its private key, and that `ca_pem` holds at least one certificate. `source`
// names the files in messages. Throws otherwise.
void check_identity(const std::string& ca_pem, const std::string& certificate_pem,
                    const std::string& key_pem, const std::string& source);

// The certificates revoked by one issuer, from a PEM CRL signed by a CA certificate in
// `ca_pem`. Empty (revokes nothing) when default-constructed.
class RevocationList {
 public:
  RevocationList();
  ~RevocationList();
  RevocationList(RevocationList&&) noexcept;
  RevocationList& operator=(RevocationList&&) noexcept;

  // Parses every CRL in `crl_pem` and checks each one's signature against the CAs in
  // `ca_pem`. Throws naming `source` when a CRL does not parse or no CA signed it.
  static RevocationList parse(const std::string& crl_pem, const std::string& ca_pem,
                              const std::string& source);

  // Why `certificate_pem` is revoked ("serial 0x1002 revoked 2026-11-24 22:01:00 UTC by
  // the CRL of CN=tether CA"), or "" when it is not. A certificate that does not parse is
  // reported as such (and must be refused).
  std::string revoked(const std::string& certificate_pem) const;

  std::size_t size() const;  // number of revoked serials over every CRL

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::tls
