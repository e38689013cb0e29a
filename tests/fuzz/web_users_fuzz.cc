// The console's users file parser and its password-hash check: only std::invalid_argument
// naming the line may come out of the parser, and a parsed hash is checked without a throw.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "tether/local/web/web_auth.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const tether::local::web::WebUser& user :
         tether::local::web::parse_web_users(text, "/fuzz", "fuzz")) {
      // Parsed hashes name at least 10 000 iterations: check one in a few to keep the pace.
      if (size % 16 == 0) (void)tether::local::web::verify_password("x", user.password_hash);
    }
  } catch (const std::invalid_argument&) {
  }
  (void)tether::local::web::cookie_value(text, "tether_session");
  return 0;
}
