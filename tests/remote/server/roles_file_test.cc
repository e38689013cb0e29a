// The roles file: identity -> role, every error naming the line, the value and what is
// allowed, nothing kept from a file with any error.

#include "roles_file.h"

#include <gtest/gtest.h>

#include <string>

namespace tether::remote::server {
namespace {

std::string error_of(const std::string& text) {
  try {
    RoleTable::parse(text, "roles.txt");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(RolesFile, MapsIdentitiesWithSpacesAndCommentsToRoles) {
  const RoleTable table = RoleTable::parse(
      "# who may do what\n\nalice operator\n  Bob Smith\tobserver  # night shift\r\n"
      "root admin\n",
      "roles.txt");
  EXPECT_EQ(table.size(), 3U);
  EXPECT_EQ(table.role_of("alice"), Role::kOperator);
  EXPECT_EQ(table.role_of("Bob Smith"), Role::kObserver);
  EXPECT_EQ(table.role_of("root"), Role::kAdmin);
  EXPECT_EQ(table.role_of("mallory"), Role::kNone);
  EXPECT_EQ(table.role_of(""), Role::kNone);
}

TEST(RolesFile, RefusesAnUnknownRoleNamingTheLineAndTheAllowedRoles) {
  EXPECT_EQ(error_of("alice operator\nbob superuser\n"),
            "roles.txt:2: role 'superuser': expected one of observer, operator, admin");
  EXPECT_EQ(error_of("alice none\n"),
            "roles.txt:1: role 'none': expected one of observer, operator, admin");
}

TEST(RolesFile, RefusesALineWithoutARoleADuplicateAndAnOverlongIdentity) {
  EXPECT_EQ(error_of("alice\n"),
            "roles.txt:1: 'alice': expected an identity and a role, e.g. 'alice operator'");
  EXPECT_EQ(error_of("alice operator\nalice admin\n"),
            "roles.txt:2: identity 'alice' is listed twice; give each identity one role");
  EXPECT_NE(error_of(std::string(65, 'a') + " admin\n").find("(65 characters): at most 64"),
            std::string::npos);
  EXPECT_EQ(error_of("al\x01ice admin\n"),
            "roles.txt:1: 'al\\x01ice admin': control characters are not allowed");
}

TEST(RolesFile, EveryoneIsAnAdminOnlyWhenAskedFor) {
  EXPECT_EQ(RoleTable::everyone_admin().role_of("anyone"), Role::kAdmin);
  EXPECT_EQ(RoleTable{}.role_of("anyone"), Role::kNone);
}

}  // namespace
}  // namespace tether::remote::server
