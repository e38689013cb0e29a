#include "tether/tls/x509.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tether::tls {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct CrlFree {
  void operator()(X509_CRL* c) const { X509_CRL_free(c); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Certificate = std::unique_ptr<X509, X509Free>;
using Crl = std::unique_ptr<X509_CRL, CrlFree>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

// OpenSSL's queued reasons, oldest first, and the queue cleared.
std::string openssl_reason() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> buffer{};
    ERR_error_string_n(code, buffer.data(), buffer.size());
    text += (text.empty() ? "" : "; ") + std::string(buffer.data());
  }
  return text.empty() ? std::string("no PEM data") : text;
}

Bio memory(const std::string& pem) {
  // BIO_new_mem_buf takes an int length; PEM files beyond 2 GiB are not certificates.
  if (pem.size() > (1U << 30)) throw std::runtime_error("PEM data larger than 1 GiB");
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Certificate first_certificate(const std::string& pem, const std::string& source) {
  Bio bio = memory(pem);
  Certificate cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert)
    throw std::runtime_error(source + ": not a PEM certificate (" + openssl_reason() + ")");
  return cert;
}

std::vector<Certificate> all_certificates(const std::string& pem, const std::string& source) {
  Bio bio = memory(pem);
  std::vector<Certificate> out;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the end of the data reads as an error
  if (out.empty()) throw std::runtime_error(source + ": holds no PEM certificate");
  return out;
}

std::string name_text(const X509_NAME* name) {
  Bio bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string time_text(const ASN1_TIME* time) {
  Bio bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), time);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string serial_text(const ASN1_INTEGER* serial) {
  BIGNUM* number = ASN1_INTEGER_to_BN(serial, nullptr);
  char* hex = BN_bn2hex(number);
  std::string text = std::string("0x") + hex;
  OPENSSL_free(hex);
  BN_free(number);
  return text;
}

}  // namespace

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string(what) + " '" + path + "': cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) throw std::runtime_error(std::string(what) + " '" + path + "': is empty");
  return text.str();
}

std::string common_name(const std::string& certificate_pem) {
  const Certificate cert = first_certificate(certificate_pem, "certificate");
  const X509_NAME* subject = X509_get_subject_name(cert.get());
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return {};
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return {};
  std::string name(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  return name;
}

void check_identity(const std::string& ca_pem, const std::string& certificate_pem,
                    const std::string& key_pem, const std::string& source) {
  all_certificates(ca_pem, source + ": CA");
  const Certificate cert = first_certificate(certificate_pem, source + ": certificate");
  Bio bio = memory(key_pem);
  const Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    throw std::runtime_error(source + ": key: not an unencrypted PEM private key (" +
                             openssl_reason() + ")");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    throw std::runtime_error(source + ": the key does not belong to the certificate (" +
                             name_text(X509_get_subject_name(cert.get())) + ")");
  }
}

struct RevocationList::Impl {
  std::vector<Crl> lists;
};

RevocationList::RevocationList() : impl_(std::make_unique<Impl>()) {}
RevocationList::~RevocationList() = default;
RevocationList::RevocationList(RevocationList&&) noexcept = default;
RevocationList& RevocationList::operator=(RevocationList&&) noexcept = default;

RevocationList RevocationList::parse(const std::string& crl_pem, const std::string& ca_pem,
                                     const std::string& source) {
  const std::vector<Certificate> cas = all_certificates(ca_pem, source + ": CA");
  RevocationList result;
  Bio bio = memory(crl_pem);
  while (X509_CRL* raw = PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr)) {
    Crl crl(raw);
    bool signed_by_ca = false;
    for (const Certificate& ca : cas) {
      if (X509_NAME_cmp(X509_CRL_get_issuer(crl.get()), X509_get_subject_name(ca.get())) != 0) {
        continue;
      }
      EVP_PKEY* key = X509_get0_pubkey(ca.get());
      if (key != nullptr && X509_CRL_verify(crl.get(), key) == 1) signed_by_ca = true;
    }
    ERR_clear_error();
    if (!signed_by_ca) {
      throw std::runtime_error(source + ": the CRL of " +
                               name_text(X509_CRL_get_issuer(crl.get())) +
                               " is not signed by a configured CA");
    }
    result.impl_->lists.push_back(std::move(crl));
  }
  ERR_clear_error();
  if (result.impl_->lists.empty()) throw std::runtime_error(source + ": holds no PEM CRL");
  return result;
}

std::string RevocationList::revoked(const std::string& certificate_pem) const {
  Certificate cert;
  try {
    cert = first_certificate(certificate_pem, "certificate");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  for (const Crl& crl : impl_->lists) {
    X509_REVOKED* entry = nullptr;
    // Matches issuer and serial.
    if (X509_CRL_get0_by_cert(crl.get(), &entry, cert.get()) == 1 && entry != nullptr) {
      return "serial " + serial_text(X509_REVOKED_get0_serialNumber(entry)) + " revoked " +
             time_text(X509_REVOKED_get0_revocationDate(entry)) + " by the CRL of " +
             name_text(X509_CRL_get_issuer(crl.get()));
    }
  }
  return {};
}

std::size_t RevocationList::size() const {
  std::size_t n = 0;
  for (const Crl& crl : impl_->lists) {
    const STACK_OF(X509_REVOKED)* revoked = X509_CRL_get_REVOKED(crl.get());
    n += revoked == nullptr ? 0 : static_cast<std::size_t>(sk_X509_REVOKED_num(revoked));
  }
  return n;
}

}  // namespace tether::tls
