#pragma once

// The remote site's roles file: who may do what (identity -> role, tether::Role).
//
//   # identity   role        (a comment; blank lines are ignored)
//   alice        operator
//   Bob Smith    observer
//   site-admin   admin
//
// The identity is a certificate's subject common name as the site's CA issued it (with
// --insecure, the name a caller declares); it may contain spaces, and is everything before
// the last word of the line, which is the role. An identity not in the file has
// Role::kNone: it may stop the arm and ask for health, nothing else.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "tether/common/vocabulary.h"

namespace tether::remote::server {

// Longest identity [characters]: X.520's upper bound for a common name.
inline constexpr std::size_t kMaxIdentityLength = 64;
// Largest roles file [bytes] and most entries: far beyond any site's staff, small enough
// to read on every SIGHUP.
inline constexpr std::size_t kMaxRolesFileSize = 1 << 20;
inline constexpr std::size_t kMaxRoles = 10000;

class RoleTable {
 public:
  RoleTable() = default;

  // Parses the text of a roles file. Throws std::invalid_argument naming `source`, the
  // line, the value and what is allowed ("roles.txt:3: role 'operater': expected one of
  // observer, operator, admin"); nothing is kept from a file with any error.
  static RoleTable parse(std::string_view text, const std::string& source);
  // Reads and parses a file; throws std::runtime_error when it cannot be read.
  static RoleTable load(const std::string& path);
  // Everyone an admin: --insecure on loopback without a roles file.
  static RoleTable everyone_admin();

  Role role_of(std::string_view identity) const;
  std::size_t size() const { return roles_.size(); }

 private:
  std::map<std::string, Role, std::less<>> roles_;
  bool everyone_admin_ = false;
};

}  // namespace tether::remote::server
