// The camera link's frames as either end receives them from its TCP peer
// (tether/remote/camera_link/protocol.h): raw bytes read as a frame header, and as each
// payload kind. Whatever a decoder accepts obeys its contract (an image's pixels fill the
// payload exactly; a known pose is a rotation), and what it accepts encodes back to the
// same bytes. A violated invariant aborts.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tether/remote/camera_link/protocol.h"

namespace {

using namespace tether::remote::camera_link;

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  Header header;
  if (decode_header(bytes, header).empty()) {
    require(header.payload_size <= max_payload(header.kind));
    // A frame that claims a MAC under no key never verifies.
    require(!mac_verifies(bytes, tether::remote::arm_link::LinkKey{}));
  }
  ImageHeader image;
  if (decode_image(bytes, image).empty()) {
    require(bytes.size() == kImageHeaderSize + std::size_t{image.width} * image.height * 3);
    require(image.width >= 1 && image.width <= kMaxSide && image.height >= 1 &&
            image.height <= kMaxSide);
    require(image.age_ns >= 0 && image.age_ns <= kMaxAgeNs);
    if (image.pose_known) {
      std::vector<std::uint8_t> again;
      append_image_header(image, again);
      require(std::equal(again.begin(), again.end(), bytes.begin()));
    }
  }
  Aim aim;
  if (decode_aim(bytes, aim).empty()) {
    const std::vector<std::uint8_t> again = encode_aim(aim);
    require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
  }
  std::string text;
  if (decode_text(bytes, text).empty()) require(text.size() == size && text.size() <= kMaxTextSize);
  if (decode_name(bytes, text).empty()) require(text.size() >= 1 && text.size() <= kMaxNameSize);
  Hello hello;
  if (decode_hello(bytes, hello).empty()) {
    const std::vector<std::uint8_t> again = encode_hello(hello);
    require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
  }
  tether::SceneDescription scene;
  if (decode_catalogue(bytes, scene).empty()) {
    // What was accepted is a scene the site can report: it reads back, with the same bodies,
    // joints and cameras (rotations pass through a conversion, so only to rounding).
    tether::SceneDescription again;
    require(decode_catalogue(encode_catalogue(scene), again).empty());
    require(again.name == scene.name && again.bodies.size() == scene.bodies.size() &&
            again.joints.size() == scene.joints.size() &&
            again.cameras.size() == scene.cameras.size());
    for (std::size_t i = 0; i < scene.cameras.size(); ++i) {
      require(again.cameras[i].name == scene.cameras[i].name &&
              again.cameras[i].width == scene.cameras[i].width &&
              again.cameras[i].height == scene.cameras[i].height);
    }
  }
  return 0;
}
