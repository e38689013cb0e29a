// The remote site's roles file parser: only std::invalid_argument naming the line may come
// out.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "roles_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tether::remote::server::RoleTable table = tether::remote::server::RoleTable::parse(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)table.role_of("alice");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
