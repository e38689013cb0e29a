#pragma once

// Logins to the operator console (tether-ground --web ... --web-users FILE): who may log in,
// their password hashes, the certificate and key the ground calls the sites with on their
// behalf, and the table of logged-in browser sessions.
//
// The users file, one person a line ('#' starts a comment):
//
//   NAME  PASSWORD-HASH  CERTIFICATE  KEY
//   alice pbkdf2-sha256$600000$<salt, base64>$<hash, base64>  people/alice.pem  people/alice.key
//
// NAME is the person's certificate's common name (the identity the sites' audit trails and
// leases show), checked at load. The hash is PBKDF2-HMAC-SHA256 (OpenSSL) with a 16-byte
// random salt and 10 000 to 10 000 000 iterations (`tether-ground --hash-password` makes
// one). CERTIFICATE and KEY are PEM files, relative to the users file's directory unless
// absolute, as deploy/make-pki.sh person writes them.

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tether::local::web {

struct WebUser {
  std::string name;
  std::string password_hash;  // pbkdf2-sha256$ITERATIONS$SALT$HASH
  std::string certificate;    // path, made absolute
  std::string key;            // path, made absolute
};

inline constexpr int kMinPasswordIterations = 10'000;
inline constexpr int kMaxPasswordIterations = 10'000'000;
inline constexpr int kDefaultPasswordIterations = 600'000;  // OWASP's figure for SHA-256

// Parses a users file's text. `source` names it in messages and `base` is the directory
// relative paths are taken from. Throws std::invalid_argument naming the line, the field,
// the value and what is allowed; nothing is returned for a file with any bad line. The
// files are not opened here (load_web_users does).
std::vector<WebUser> parse_web_users(std::string_view text, const std::string& base,
                                     const std::string& source);

// Reads and parses `path`, then checks each person's certificate and key with `ca_pem`
// (the CA the ground's --ca names; empty: checked without it) and that the certificate's
// common name is the person's NAME. Throws naming the file, the line and the problem.
std::vector<WebUser> load_web_users(const std::string& path, const std::string& ca_pem);

// "pbkdf2-sha256$ITERATIONS$SALT$HASH" of `password` with a fresh random salt. Throws
// std::invalid_argument for iterations outside [kMinPasswordIterations,
// kMaxPasswordIterations] or an empty password.
std::string hash_password(std::string_view password, int iterations = kDefaultPasswordIterations);

// Whether `password` matches `hash` (compared in constant time). A malformed hash matches
// nothing.
bool verify_password(std::string_view password, std::string_view hash);

// Logged-in browser sessions: a random session token (the cookie) per login, with its CSRF
// token, and the failed-login throttle. Thread-safe; every call is short.
class LoginTable {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::minutes kIdleTimeout{30};
  static constexpr std::chrono::hours kLifetime{12};
  static constexpr int kMaxFailures = 5;  // in a row; then the name is locked
  static constexpr std::chrono::seconds kLockout{60};

  struct Login {
    std::string user;
    std::string csrf;   // 256 random bits, hex
    std::string token;  // 256 random bits, hex: the cookie's value
  };

  // After a successful password check: a new session for `user`.
  Login open(const std::string& user, Clock::time_point now = Clock::now());
  // The session of `token` if it exists and has not expired (idle or lifetime); refreshes
  // its idle timer.
  std::optional<Login> find(std::string_view token, Clock::time_point now = Clock::now());
  // Ends the session of `token`; false if there was none.
  bool close(std::string_view token);

  // Seconds `user` must still wait before another attempt (0: may try now).
  int locked_for(const std::string& user, Clock::time_point now = Clock::now());
  void failed(const std::string& user, Clock::time_point now = Clock::now());
  void succeeded(const std::string& user);

 private:
  struct Entry {
    Login login;
    Clock::time_point opened, used;
  };
  struct Failures {
    int count = 0;
    Clock::time_point locked_until{};
  };
  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> sessions_;
  std::map<std::string, Failures> failures_;
};

// 32 bytes from OpenSSL's CSPRNG, as 64 hex digits.
std::string random_token();

// The value of cookie `name` in a Cookie header ("a=1; tether_session=ab12"), or "".
std::string cookie_value(std::string_view header, std::string_view name);

}  // namespace tether::local::web
