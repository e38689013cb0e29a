#pragma once

// The camera link: how a remote site takes the images of cameras that another process owns
// (tether-simarm renders the simulated cell's cameras; an integrator's camera server would
// drive real ones), as an IP camera delivers them: over a TCP connection of their own beside
// the arm link, never inside the 1 kHz arm-link datagrams. The site (client) connects, both
// ends prove they hold the arm link's shared secret, and the site asks for one thing per
// connection: the catalogue (the scene and its cameras), one camera's images until it closes
// the connection, or an aim of the pan-tilt head.
//
// Images travel uncompressed (RGB, 8 bits a channel, top row first), as GigE Vision and USB3
// Vision cameras deliver them: the link is the site's own LAN or loopback (640×480 at 15 Hz
// is 110 Mbit/s), the site's AprilTag detector sees exactly what was rendered, and the one
// lossy encoding happens where the operator's bandwidth is spent, on the site (WatchCamera).
//
// Every field is little-endian; doubles are IEEE 754 binary64. Offsets in bytes.
//
//   frame = header (24) ‖ payload ‖ MAC (16)
//     0   u32  magic          0x4D414354 ("TCAM" on the wire)
//     4   u16  version        kProtocolVersion (1)
//     6   u16  kind           Kind
//     8   u32  payload size   within kind's limit (max_payload())
//     12  u32  reserved       0
//     16  u64  sequence       per direction, 1, 2, 3, ... (HELLO and WELCOME are 1)
//     MAC: HMAC-SHA256 of header and payload under the session key, truncated to 128 bits;
//     all zero in HELLO (there is no session key yet).
//
//   HELLO      site → camera server: nonce_c[16], arm model id u64 (the site's arm)
//   WELCOME    server → site: nonce_s[16], arm model id u64 (the server's arm)
//   CATALOGUE? site → server: empty        CATALOGUE  server → site: a v1.SceneDescription
//   WATCH      site → server: camera name (1…64 bytes)
//   WATCHING   server → site: empty, then IMAGE frames until the site closes the connection
//   IMAGE      server → site: kImageHeaderSize bytes (below), then width × height × 3 bytes
//   AIM        site → server: pan f64, tilt f64 [rad], camera name
//   RESULT     server → site: what is wrong (UTF-8, ≤ 1024 bytes), empty when done
//   ERROR      server → site: why a request is refused (UTF-8, ≤ 1024 bytes); then it closes
//
//   IMAGE header (136 bytes)
//     0   u64  number         images this camera took before this one since watched
//     8   f64  arm time       [s] the arm's clock when taken (the arm link's STATE clock)
//     16  i64  age            [ns] how long before this frame was sent it was taken, 0…10 s
//     24  u32  width          [px] 1…kMaxSide
//     28  u32  height         [px] 1…kMaxSide
//     32  u32  flags          bit 0: the pose below is known
//     36  u32  reserved       0
//     40  f64  p[3]           [m] the camera's frame C in BASE (camera_device.h), then
//     64  f64  R[9]           its rotation, row by row (orthonormal, det +1, within 1e-6)
//
// Authentication. Both ends read the arm link's shared secret (tether-simarm --key,
// tether-remote --arm-link-key). The session key is
//     HMAC-SHA256(secret, "tether camera link v1" ‖ nonce_c ‖ nonce_s ‖ arm model id),
// truncated to 128 bits, with both nonces fresh random bytes. The server proves the secret
// with WELCOME's MAC, the site with its request's; a frame whose MAC or sequence is wrong
// ends the connection. Another arm model gives another key, so a site and a camera server
// of different arms never talk; the site names both ids when WELCOME says so. Images are
// authenticated, not encrypted (the arm link's trust model: the site's own network).
//
// decode functions neither throw nor allocate beyond their outputs; each error message
// names the field, the value and the allowed range.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/common/types.h"
#include "tether/remote/arm_link/protocol.h"

namespace tether::remote::camera_link {

inline constexpr std::uint32_t kMagic = 0x4D414354;
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = 24;
inline constexpr std::size_t kMacSize = arm_link::kMacSize;
inline constexpr std::size_t kNonceSize = 16;
inline constexpr std::size_t kHelloSize = kNonceSize + 8;
inline constexpr std::size_t kImageHeaderSize = 136;
inline constexpr std::size_t kMaxNameSize = 64;
inline constexpr std::size_t kMaxTextSize = 1024;
inline constexpr std::size_t kMaxCatalogueSize = 1 << 20;
inline constexpr std::uint32_t kMaxSide = 4096;  // [px] an image's width or height
inline constexpr std::int64_t kMaxAgeNs = 10'000'000'000;
inline constexpr std::uint32_t kPoseKnown = 1U << 0;
inline constexpr std::string_view kSessionKeyLabel = "tether camera link v1";

enum class Kind : std::uint16_t {
  kHello = 1,
  kWelcome = 2,
  kCatalogueRequest = 3,
  kCatalogue = 4,
  kWatch = 5,
  kWatching = 6,
  kImage = 7,
  kAim = 8,
  kResult = 9,
  kError = 10,
};

const char* to_string(Kind kind);
// The largest payload a frame of `kind` may carry [bytes].
std::size_t max_payload(Kind kind);

struct Header {
  Kind kind = Kind::kHello;
  std::uint32_t payload_size = 0;
  std::uint64_t sequence = 0;
};

using Nonce = std::array<std::uint8_t, kNonceSize>;

struct Hello {
  Nonce nonce{};
  std::uint64_t arm_model = 0;
};

struct ImageHeader {
  std::uint64_t number = 0;
  double arm_time = 0.0;     // [s]
  std::int64_t age_ns = 0;   // [ns]
  std::uint32_t width = 0;   // [px]
  std::uint32_t height = 0;  // [px]
  bool pose_known = false;
  Frame base_T_camera;
};

struct Aim {
  double pan = 0.0;   // [rad]
  double tilt = 0.0;  // [rad]
  std::string camera;
};

// The frame's bytes: header (with `sequence`), payload, MAC under `key` (zeros when the key is
// not ready, as in HELLO).
std::vector<std::uint8_t> encode_frame(Kind kind, std::uint64_t sequence,
                                       std::span<const std::uint8_t> payload,
                                       const arm_link::LinkKey& key);
// Appends the IMAGE header for `image` to `out` (the pixels follow, appended by the caller).
void append_image_header(const ImageHeader& image, std::vector<std::uint8_t>& out);
std::vector<std::uint8_t> encode_hello(const Hello& hello);
std::vector<std::uint8_t> encode_aim(const Aim& aim);

// Checks a frame's first kHeaderSize bytes: magic, version, a known kind, the reserved word,
// the payload size against the kind's limit. Returns what is wrong, or an empty string.
std::string decode_header(std::span<const std::uint8_t> bytes, Header& out);
// Whether the last kMacSize bytes of `frame` (header ‖ payload ‖ MAC) are the MAC of the
// rest under `key` (constant time).
bool mac_verifies(std::span<const std::uint8_t> frame, const arm_link::LinkKey& key);
// Payload decoders: return what is wrong, or an empty string.
std::string decode_hello(std::span<const std::uint8_t> payload, Hello& out);
// The IMAGE's header; its pixels are payload[kImageHeaderSize …], width × height × 3 bytes
// (checked against the payload's size).
std::string decode_image(std::span<const std::uint8_t> payload, ImageHeader& out);
std::string decode_aim(std::span<const std::uint8_t> payload, Aim& out);
// A camera's name (WATCH): 1…kMaxNameSize bytes of printable ASCII.
std::string decode_name(std::span<const std::uint8_t> payload, std::string& out);
// RESULT and ERROR: up to kMaxTextSize bytes of UTF-8 text without control characters
// other than newline (shown to operators as it is).
std::string decode_text(std::span<const std::uint8_t> payload, std::string& out);

// CATALOGUE: the scene as tether.v1.SceneDescription (its cameras among it); decoding checks
// what tether::proto's to_scene checks (finite numbers, known shapes, cameras' sizes and
// rates), naming the field under "catalogue".
std::vector<std::uint8_t> encode_catalogue(const SceneDescription& scene);
std::string decode_catalogue(std::span<const std::uint8_t> payload, SceneDescription& out);

// The session's key (top of this file).
arm_link::LinkKey derive_session_key(const arm_link::LinkSecret& secret, const Nonce& client,
                                     const Nonce& server, std::uint64_t arm_model);

// Fresh random bytes (OpenSSL's RAND_bytes); throws std::runtime_error if it fails.
Nonce make_nonce();

}  // namespace tether::remote::camera_link
