#include "roles_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tether::remote::server {

namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Printable ASCII and UTF-8 continuation/lead bytes; no control characters.
bool printable(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (const char c : s.substr(0, 80)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + (s.size() > 80 ? "...'" : "'");
}

}  // namespace

RoleTable RoleTable::parse(std::string_view text, const std::string& source) {
  if (text.size() > kMaxRolesFileSize) {
    throw std::invalid_argument(source + ": " + std::to_string(text.size()) + " bytes: at most " +
                                std::to_string(kMaxRolesFileSize));
  }
  RoleTable table;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const std::string where = source + ":" + std::to_string(line_number) + ": ";
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (line.empty()) continue;
    if (!printable(line)) {
      throw std::invalid_argument(where + quoted(line) + ": control characters are not allowed");
    }
    const std::size_t split = line.find_last_of(" \t");
    if (split == std::string_view::npos) {
      throw std::invalid_argument(where + quoted(line) +
                                  ": expected an identity and a role, e.g. 'alice operator'");
    }
    const std::string_view identity = trim(line.substr(0, split));
    const std::string_view role_text = line.substr(split + 1);
    Role role = Role::kNone;
    if (!parse_role(role_text, role) || role == Role::kNone) {
      throw std::invalid_argument(where + "role " + quoted(role_text) +
                                  ": expected one of observer, operator, admin");
    }
    if (identity.size() > kMaxIdentityLength) {
      throw std::invalid_argument(where + "identity " + quoted(identity) + " (" +
                                  std::to_string(identity.size()) + " characters): at most " +
                                  std::to_string(kMaxIdentityLength));
    }
    if (table.roles_.size() >= kMaxRoles) {
      throw std::invalid_argument(where + "more than " + std::to_string(kMaxRoles) + " identities");
    }
    if (!table.roles_.emplace(std::string(identity), role).second) {
      throw std::invalid_argument(where + "identity " + quoted(identity) +
                                  " is listed twice; give each identity one role");
    }
  }
  return table;
}

RoleTable RoleTable::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("roles file '" + path + "': cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

RoleTable RoleTable::everyone_admin() {
  RoleTable table;
  table.everyone_admin_ = true;
  return table;
}

Role RoleTable::role_of(std::string_view identity) const {
  if (everyone_admin_) return Role::kAdmin;
  const auto it = roles_.find(identity);
  return it == roles_.end() ? Role::kNone : it->second;
}

}  // namespace tether::remote::server
