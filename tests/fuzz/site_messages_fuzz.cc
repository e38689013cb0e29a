// What a recovery request and a site's scene bring in from the wire: bytes parsed as
// tether.v1.RecoverRequest (the remote site's server::from_wire) or as
// tether.v1.SceneDescription (tether::proto::to_scene, which the ground runs on every status),
// chosen by the first byte. A refused message is a message or a ConversionError, never a
// crash; an accepted one is finite.

#include <google/protobuf/stubs/logging.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tether/proto/convert.h"
#include "tether/v1/remote_site.pb.h"
#include "wire.h"

// Strings that are not UTF-8 are refused by the parser, which logs each one: not news here.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int body = static_cast<int>(size - 1);
  if ((data[0] & 1U) == 0) {
    tether::v1::RecoverRequest request;
    if (!request.ParseFromArray(data + 1, body)) return 0;
    tether::remote::RecoveryRequest out;
    if (tether::remote::server::from_wire(request, out).empty()) {
      if (!std::isfinite(out.distance) || !std::isfinite(out.speed) || out.speed < 0.0) {
        std::abort();
      }
      if (out.kind == tether::remote::RecoveryKind::kJointJog &&
          (out.joint < 0 || out.joint >= tether::kArmDof)) {
        std::abort();
      }
    }
    return 0;
  }
  tether::v1::SceneDescription scene;
  if (!scene.ParseFromArray(data + 1, body)) return 0;
  try {
    const tether::SceneDescription out = tether::proto::to_scene(scene, "scene");
    for (const tether::SceneBody& b : out.bodies) {
      if (!b.size.allFinite() || !b.pose.p.allFinite() || !b.pose.R.allFinite()) std::abort();
    }
    for (const tether::SceneJoint& j : out.joints) {
      if (!j.axis.allFinite() || std::abs(j.axis.norm() - 1.0) > 1e-9) std::abort();
    }
  } catch (const tether::proto::ConversionError&) {
  }
  return 0;
}
