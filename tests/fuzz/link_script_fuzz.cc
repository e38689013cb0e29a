// The link emulator's script parser: only std::invalid_argument "NAME:LINE: ..." may come
// out, and every script it accepts gives valid profiles when played.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "tether/linkem/link_script.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto events = tether::linkem::parse_link_script(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    tether::linkem::LinkProfile profile;
    for (const auto& event : events) {
      event.apply(profile);
      try {
        tether::linkem::validate(profile);
      } catch (const std::invalid_argument&) {
        std::abort();  // the parser promised valid profiles
      }
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
