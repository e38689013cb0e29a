#include "tether/local/web/web_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cctype>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tether/tls/x509.h"

namespace tether::local::web {

namespace {

constexpr std::size_t kSaltBytes = 16;
constexpr std::size_t kHashBytes = 32;

std::string base64(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// Decodes exactly `expected` bytes, or returns nothing.
std::optional<std::string> unbase64(std::string_view text, std::size_t expected) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4 * ((expected + 2) / 3)) return {};
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return {};
  // EVP_DecodeBlock counts the padding's zero bytes.
  const std::size_t padding = (text.back() == '=' ? 1 : 0) + (text.ends_with("==") ? 1 : 0);
  if (static_cast<std::size_t>(n) - padding != expected) return {};
  out.resize(expected);
  return out;
}

std::array<unsigned char, kHashBytes> pbkdf2(std::string_view password, std::string_view salt,
                                             int iterations) {
  std::array<unsigned char, kHashBytes> out{};
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(),
                        static_cast<int>(out.size()), out.data()) != 1) {
    throw std::runtime_error("PBKDF2-HMAC-SHA256 failed in OpenSSL");
  }
  return out;
}

struct ParsedHash {
  int iterations = 0;
  std::string salt, hash;
};

// Why `hash` is not a pbkdf2-sha256 hash of ours ("" when it is).
std::string parse_hash(std::string_view text, ParsedHash& out) {
  constexpr std::string_view kScheme = "pbkdf2-sha256$";
  if (!text.starts_with(kScheme)) return "expected pbkdf2-sha256$ITERATIONS$SALT$HASH";
  text.remove_prefix(kScheme.size());
  const auto d1 = text.find('$');
  const auto d2 = d1 == std::string_view::npos ? d1 : text.find('$', d1 + 1);
  if (d2 == std::string_view::npos || text.find('$', d2 + 1) != std::string_view::npos) {
    return "expected pbkdf2-sha256$ITERATIONS$SALT$HASH";
  }
  const std::string_view iterations = text.substr(0, d1);
  if (iterations.empty() || iterations.size() > 8 ||
      iterations.find_first_not_of("0123456789") != std::string_view::npos) {
    return "iterations '" + std::string(iterations) + "': expected an integer in [" +
           std::to_string(kMinPasswordIterations) + ", " + std::to_string(kMaxPasswordIterations) +
           "]";
  }
  out.iterations = std::stoi(std::string(iterations));
  if (out.iterations < kMinPasswordIterations || out.iterations > kMaxPasswordIterations) {
    return "iterations " + std::to_string(out.iterations) + ": expected [" +
           std::to_string(kMinPasswordIterations) + ", " + std::to_string(kMaxPasswordIterations) +
           "]";
  }
  const auto salt = unbase64(text.substr(d1 + 1, d2 - d1 - 1), kSaltBytes);
  if (!salt) return "salt: expected " + std::to_string(kSaltBytes) + " bytes in base64";
  const auto hash = unbase64(text.substr(d2 + 1), kHashBytes);
  if (!hash) return "hash: expected " + std::to_string(kHashBytes) + " bytes in base64";
  out.salt = *salt;
  out.hash = *hash;
  return {};
}

std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::vector<WebUser> parse_web_users(std::string_view text, const std::string& base,
                                     const std::string& source) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
  std::vector<WebUser> users;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = source + ":" + std::to_string(number) + ": ";
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string word; fields >> word;) f.push_back(word);
    if (f.empty()) continue;
    if (f.size() != 4) {
      throw std::invalid_argument(where + std::to_string(f.size()) +
                                  " fields: expected NAME PASSWORD-HASH CERTIFICATE KEY");
    }
    if (!std::regex_match(f[0], kName)) {
      throw std::invalid_argument(where + "name '" + f[0] +
                                  "': expected 1-64 of A-Z a-z 0-9 _ . @ - (starting with a "
                                  "letter or digit), the certificate's common name");
    }
    for (const WebUser& u : users) {
      if (u.name == f[0]) throw std::invalid_argument(where + "name '" + f[0] + "': listed twice");
    }
    ParsedHash parsed;
    if (const std::string why = parse_hash(f[1], parsed); !why.empty()) {
      std::string message = where + "password hash of '" + f[0] + "': ";
      message += why;
      message += " (tether-ground --hash-password makes one)";
      throw std::invalid_argument(message);
    }
    const auto absolute = [&](const std::string& p) {
      const std::filesystem::path path(p);
      return (path.is_absolute() ? path : std::filesystem::path(base) / path).string();
    };
    users.push_back({f[0], f[1], absolute(f[2]), absolute(f[3])});
  }
  if (users.empty()) {
    throw std::invalid_argument(source +
                                ": no users: expected a line NAME PASSWORD-HASH "
                                "CERTIFICATE KEY per person");
  }
  return users;
}

std::vector<WebUser> load_web_users(const std::string& path, const std::string& ca_pem) {
  const std::string text = tls::read_file(path, "--web-users");
  const std::string base = std::filesystem::absolute(path).parent_path().string();
  std::vector<WebUser> users = parse_web_users(text, base, path);
  for (const WebUser& u : users) {
    const std::string source = path + ": user '" + u.name + "'";
    const std::string cert = tls::read_file(u.certificate, "certificate");
    const std::string key = tls::read_file(u.key, "key");
    if (!ca_pem.empty()) tls::check_identity(ca_pem, cert, key, source);
    const std::string cn = tls::common_name(cert);
    if (cn != u.name) {
      std::string message = source + ": certificate " + u.certificate;
      message += " names CN '" + cn;
      throw std::invalid_argument(message +
                                  "': expected the user's name, the identity the sites see");
    }
  }
  return users;
}

std::string hash_password(std::string_view password, int iterations) {
  if (password.empty()) throw std::invalid_argument("password: empty");
  if (iterations < kMinPasswordIterations || iterations > kMaxPasswordIterations) {
    throw std::invalid_argument("iterations = " + std::to_string(iterations) + ": expected [" +
                                std::to_string(kMinPasswordIterations) + ", " +
                                std::to_string(kMaxPasswordIterations) + "]");
  }
  std::array<unsigned char, kSaltBytes> salt{};
  if (RAND_bytes(salt.data(), salt.size()) != 1) throw std::runtime_error("RAND_bytes failed");
  const auto hash =
      pbkdf2(password, std::string_view(reinterpret_cast<const char*>(salt.data()), salt.size()),
             iterations);
  return "pbkdf2-sha256$" + std::to_string(iterations) + "$" + base64(salt.data(), salt.size()) +
         "$" + base64(hash.data(), hash.size());
}

bool verify_password(std::string_view password, std::string_view hash) {
  ParsedHash parsed;
  if (!parse_hash(hash, parsed).empty()) return false;
  const auto computed = pbkdf2(password, parsed.salt, parsed.iterations);
  return same(std::string_view(reinterpret_cast<const char*>(computed.data()), computed.size()),
              parsed.hash);
}

std::string random_token() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), bytes.size()) != 1) throw std::runtime_error("RAND_bytes failed");
  return hex(bytes.data(), bytes.size());
}

std::string cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const auto end = header.find(';');
    std::string_view pair = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
  }
  return {};
}

LoginTable::Login LoginTable::open(const std::string& user, Clock::time_point now) {
  Login login{user, random_token(), random_token()};
  std::lock_guard lock(mutex_);
  // Expired sessions go when a new one opens: the table stays as small as the logins.
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const bool expired =
        now - it->second.used > kIdleTimeout || now - it->second.opened > kLifetime;
    it = expired ? sessions_.erase(it) : std::next(it);
  }
  sessions_[login.token] = {login, now, now};
  return login;
}

std::optional<LoginTable::Login> LoginTable::find(std::string_view token, Clock::time_point now) {
  if (token.empty()) return {};
  std::lock_guard lock(mutex_);
  const auto it = sessions_.find(token);
  if (it == sessions_.end()) return {};
  if (now - it->second.used > kIdleTimeout || now - it->second.opened > kLifetime) {
    sessions_.erase(it);
    return {};
  }
  it->second.used = now;
  return it->second.login;
}

bool LoginTable::close(std::string_view token) {
  std::lock_guard lock(mutex_);
  const auto it = sessions_.find(token);
  if (it == sessions_.end()) return false;
  sessions_.erase(it);
  return true;
}

int LoginTable::locked_for(const std::string& user, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto it = failures_.find(user);
  if (it == failures_.end() || it->second.locked_until <= now) return 0;
  return static_cast<int>(
      std::chrono::ceil<std::chrono::seconds>(it->second.locked_until - now).count());
}

void LoginTable::failed(const std::string& user, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  Failures& f = failures_[user];
  if (++f.count >= kMaxFailures) {
    f.count = 0;
    f.locked_until = now + kLockout;
  }
}

void LoginTable::succeeded(const std::string& user) {
  std::lock_guard lock(mutex_);
  failures_.erase(user);
}

}  // namespace tether::local::web
