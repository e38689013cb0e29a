// The camera link's frames and payloads (tether/remote/camera_link/protocol.h): what is
// written reads back, and every malformed field is refused naming the field, the value and
// the allowed range.
#include "tether/remote/camera_link/protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "udp_peer.h"

namespace tether::remote::camera_link {
namespace {

using ::tether::remote::testing::other_secret;
using ::tether::remote::testing::test_secret;

std::vector<std::uint8_t> image_payload(const ImageHeader& h) {
  std::vector<std::uint8_t> out;
  append_image_header(h, out);
  out.resize(out.size() + std::size_t{h.width} * h.height * 3, 7);
  return out;
}

ImageHeader sample_image() {
  ImageHeader h;
  h.number = 42;
  h.arm_time = 3.25;
  h.age_ns = 12'000'000;
  h.width = 32;
  h.height = 16;
  h.pose_known = true;
  h.base_T_camera.R = Eigen::AngleAxisd(0.3, Vector3(0, 0, 1)).toRotationMatrix();
  h.base_T_camera.p = Vector3(0.5, -0.25, 1.0);
  return h;
}

std::string contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos ? std::string() : haystack;
}

TEST(CameraLinkProtocol, AnImageReadsBackFieldForField) {
  const ImageHeader sent = sample_image();
  const std::vector<std::uint8_t> payload = image_payload(sent);
  ASSERT_EQ(payload.size(), kImageHeaderSize + 32 * 16 * 3);
  ImageHeader got;
  ASSERT_EQ(decode_image(payload, got), "");
  EXPECT_EQ(got.number, 42u);
  EXPECT_EQ(got.arm_time, 3.25);
  EXPECT_EQ(got.age_ns, 12'000'000);
  EXPECT_EQ(got.width, 32u);
  EXPECT_EQ(got.height, 16u);
  EXPECT_TRUE(got.pose_known);
  EXPECT_TRUE(got.base_T_camera.R.isApprox(sent.base_T_camera.R, 0.0));
  EXPECT_EQ(got.base_T_camera.p, sent.base_T_camera.p);
}

TEST(CameraLinkProtocol, MalformedImagesAreRefusedNamingFieldValueAndRange) {
  struct Case {
    const char* what;
    void (*mutate)(ImageHeader&);
    const char* message;
  };
  const Case cases[] = {
      {"time", [](ImageHeader& h) { h.arm_time = std::nan(""); }, "arm time = nan s"},
      {"age", [](ImageHeader& h) { h.age_ns = -5; }, "age = -5 ns: expected 0…10000000000"},
      {"width", [](ImageHeader& h) { h.width = 5000; }, "width = 5000 px: expected 1…4096"},
      {"rotation", [](ImageHeader& h) { h.base_T_camera.R(0, 0) = 2.0; }, "pose R: not a rotation"},
      {"position", [](ImageHeader& h) { h.base_T_camera.p.x() = INFINITY; }, "pose p = (inf"},
  };
  for (const Case& c : cases) {
    ImageHeader h = sample_image();
    c.mutate(h);
    std::vector<std::uint8_t> payload;
    append_image_header(h, payload);
    payload.resize(kImageHeaderSize + 32 * 16 * 3, 0);
    ImageHeader got;
    EXPECT_EQ(contains(decode_image(payload, got), c.message), "") << c.what;
  }
  // Pixels short of width × height × 3.
  std::vector<std::uint8_t> payload = image_payload(sample_image());
  payload.pop_back();
  ImageHeader got;
  EXPECT_EQ(decode_image(payload, got), "IMAGE payload = 1671 bytes: 32×16 RGB needs 1672");
  // A pose not known reads as the identity whatever the bytes say.
  ImageHeader unknown = sample_image();
  unknown.pose_known = false;
  ASSERT_EQ(decode_image(image_payload(unknown), got), "");
  EXPECT_TRUE(got.base_T_camera.R.isIdentity());
}

TEST(CameraLinkProtocol, HeadersAreCheckedBeforeAnyPayloadIsRead) {
  const arm_link::LinkSecret secret = test_secret();
  const std::vector<std::uint8_t> ok =
      encode_frame(Kind::kWatch, 3, std::vector<std::uint8_t>{'a'}, secret.key);
  Header h;
  ASSERT_EQ(decode_header(ok, h), "");
  EXPECT_EQ(h.kind, Kind::kWatch);
  EXPECT_EQ(h.sequence, 3u);
  EXPECT_EQ(h.payload_size, 1u);
  auto with = [&](std::size_t at, std::uint8_t value) {
    std::vector<std::uint8_t> b = ok;
    b[at] = value;
    return b;
  };
  EXPECT_EQ(decode_header(with(0, 0), h), "magic = 0x4D414300: expected 0x4D414354 (\"TCAM\")");
  EXPECT_EQ(decode_header(with(4, 9), h), "version = 9: this end speaks 1");
  EXPECT_EQ(decode_header(with(6, 11), h), "kind = 11: expected 1…10");
  EXPECT_EQ(decode_header(with(12, 1), h), "reserved = 1: expected 0");
  // A WATCH longer than a camera's name may be, before its bytes are awaited.
  EXPECT_EQ(decode_header(with(8, 65), h), "payload size of WATCH = 65 bytes: at most 64");
  EXPECT_EQ(decode_header(std::span(ok).first(10), h), "header = 10 bytes: expected 24");
}

TEST(CameraLinkProtocol, TheMacBindsEveryByteAndTheKeyOfTheSession) {
  const arm_link::LinkSecret secret = test_secret();
  const Nonce a = make_nonce();
  const Nonce b = make_nonce();
  EXPECT_NE(a, b);
  const arm_link::LinkKey key = derive_session_key(secret, a, b, 7);
  const std::vector<std::uint8_t> frame =
      encode_frame(Kind::kImage, 1, image_payload(sample_image()), key);
  EXPECT_TRUE(mac_verifies(frame, key));
  for (const std::size_t at :
       {std::size_t{0}, std::size_t{17}, frame.size() / 2, frame.size() - 1}) {
    std::vector<std::uint8_t> altered = frame;
    altered[at] ^= 1;
    EXPECT_FALSE(mac_verifies(altered, key)) << "byte " << at;
  }
  // Another secret, other nonces or another arm: another key.
  EXPECT_FALSE(mac_verifies(frame, derive_session_key(other_secret(), a, b, 7)));
  EXPECT_FALSE(mac_verifies(frame, derive_session_key(secret, b, a, 7)));
  EXPECT_FALSE(mac_verifies(frame, derive_session_key(secret, a, b, 8)));
  EXPECT_FALSE(mac_verifies(frame, arm_link::LinkKey{}));
}

TEST(CameraLinkProtocol, NamesAimsAndTextsAreCheckedForWhatTheyCarry) {
  std::string name;
  const std::vector<std::uint8_t> spaced{'a', ' ', 'b'};
  EXPECT_EQ(decode_name(spaced, name),
            "camera name byte 1 = 32: expected printable ASCII (33…126)");
  EXPECT_EQ(decode_name({}, name), "camera name = 0 bytes: expected 1…64");
  Aim aim;
  ASSERT_EQ(decode_aim(encode_aim(Aim{0.5, -0.25, "stereo_left"}), aim), "");
  EXPECT_EQ(aim.pan, 0.5);
  EXPECT_EQ(aim.tilt, -0.25);
  EXPECT_EQ(aim.camera, "stereo_left");
  EXPECT_EQ(contains(decode_aim(encode_aim(Aim{100.0, 0.0, "x"}), aim), "pan = 100 rad"), "");
  std::string text;
  const std::vector<std::uint8_t> bell{'o', 7};
  EXPECT_EQ(decode_text(bell, text), "text byte 1 = 7: expected no control character but newline");
  Hello hello;
  EXPECT_EQ(decode_hello(encode_hello(Hello{Nonce{}, 1}), hello),
            "nonce = all zero: expected 16 random bytes");
}

TEST(CameraLinkProtocol, TheCatalogueCarriesTheSceneAndRefusesABadCamera) {
  SceneDescription scene;
  scene.name = "door";
  SceneCamera c;
  c.name = "overview";
  c.pose.p = Vector3(1.5, 0.2, 1.1);
  scene.cameras.push_back(c);
  SceneDescription got;
  ASSERT_EQ(decode_catalogue(encode_catalogue(scene), got), "");
  EXPECT_EQ(got, scene);
  scene.cameras[0].width = 15;
  EXPECT_EQ(contains(decode_catalogue(encode_catalogue(scene), got),
                     "catalogue.cameras[0].width = 15: must be even and in [16, 4096] px"),
            "");
  const std::vector<std::uint8_t> junk{0xFF, 0xFF, 0xFF};
  EXPECT_EQ(decode_catalogue(junk, got),
            "catalogue: 3 bytes that are not a tether.v1.SceneDescription");
}

}  // namespace
}  // namespace tether::remote::camera_link
