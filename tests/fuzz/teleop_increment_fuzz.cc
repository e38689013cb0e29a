// A hand-controller increment as the remote site receives it: wire bytes parsed as
// tether.v1.TeleopIncrement, then checked and converted (server::from_wire). A refused
// increment is a message, never an exception; an accepted one is finite.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tether/v1/remote_site.pb.h"
#include "wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tether::v1::TeleopIncrement increment;
  if (!increment.ParseFromArray(data, static_cast<int>(size))) return 0;
  tether::remote::HandControllerSample sample;
  const std::string problem = tether::remote::server::from_wire(increment, 1000, sample);
  if (problem.empty()) {
    for (int i = 0; i < 6; ++i) {
      if (!std::isfinite(sample.increment[i])) std::abort();
    }
    if (!std::isfinite(sample.arm_angle_increment) || sample.sequence <= 1000) {
      std::abort();
    }
  }
  return 0;
}
