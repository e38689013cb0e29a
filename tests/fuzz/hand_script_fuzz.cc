// The hand-controller script parser (local_site's sim: and script: devices). Only the
// documented std::runtime_error "NAME:LINE: ..." may come out; a parsed script is queried
// over its whole span.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tether/local/hand_controller/script.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const tether::local::HandScript script = tether::local::HandScript::parse(in, "fuzz");
    double t = 0.0;
    for (int i = 0; i < 64 && t < script.end_time() && t < 1e6; ++i) {
      (void)script.segment_at(t);
      (void)script.arm_angle_change(0.0, t);
      t = script.next_change_after(t);
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
