#pragma once

// The camera views' datagrams (the datagram plane, teleop_datagram.h's sealing): a camera's
// encoded frames remote → ground as fragments, and the receiver's feedback ground → remote,
// under keys the remote hands out over the WatchCamera call that opens the view. The gRPC
// call stays the control plane; video never rides on a connection, so a lost packet costs
// part of a frame, never a stall of what follows.
//
// Loss: each group of up to kParityGroup fragments is followed by a parity fragment (their
// XOR, each zero-padded to the group's first), so any one lost fragment of a group is rebuilt
// from the others: at 2 % packet loss a 7-fragment frame arrives whole 99 % of the time
// rather than 87 %. A frame still incomplete when a newer one completes is lost, and the
// receiver asks for a key frame (what follows a lost frame may not decode).
//
// Fragment payload (little-endian), at most kVideoChunk bytes of frame each:
//   [0]      flags: bit 0 the frame is a key frame, bit 1 a parity fragment, bit 2 the
//            camera's pose is known
//   [1..4]   frame number (u32, the stream's, from 0)
//   [5..6]   fragment index (u16; a parity fragment: its group's), [7..8] the frame's data
//            fragment count (u16, ≥ 1)
//   [9..16]  capture time (i64, the remote's CLOCK_MONOTONIC [ns])
//   [17..20] the frame's size in bytes (u32)
//   [21..32] the camera's position at capture, BASE [m] (3 × f32; zero when not known)
//   [33..48] its frame C's orientation in BASE, unit quaternion w, x, y, z (4 × f32)
//   [49..]   the fragment's bytes (frame bytes index·kVideoChunk onward)
// Every fragment repeats the frame's header, so whichever arrives first opens the frame. The
// pose is what the picture was taken from (a camera on the gripper or the pan-tilt mount
// moves): the ground draws its predicted arm through it over the delayed picture.
// Feedback payload: [0] flags (bit 0: send a key frame), [1..4] newest frame number completed
// (u32), [5..12] the ground's CLOCK_MONOTONIC when sent (i64), [13..16] frames completed, [17..20]
// frames lost (u32 each, since the view opened). Feedback also tells the remote where the
// ground is (its address, learnt and followed from authentic feedback only), so the ground
// sends it at once and then every few hundred milliseconds.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tether/datagram/teleop_datagram.h"

namespace tether::datagram {

inline constexpr std::size_t kVideoFragmentHeader = 49;
inline constexpr std::size_t kVideoChunk =
    kMaxVideoDatagram - kHeaderBytes - kTagBytes - kVideoFragmentHeader;  // 1158 bytes
inline constexpr std::size_t kMaxVideoFrame = 4U << 20U;                  // 4 MiB
inline constexpr std::size_t kVideoFeedbackBytes = 21;
inline constexpr std::size_t kParityGroup = 8;  // data fragments a parity fragment covers

// Where a camera was when it took a frame: its frame C (z out of the lens, x right and y down
// in the image; scene_description.h SceneCamera) in BASE.
struct CameraPose {
  bool known = false;
  std::array<float, 3> p{0.0F, 0.0F, 0.0F};        // [m]
  std::array<float, 4> q{1.0F, 0.0F, 0.0F, 0.0F};  // w, x, y, z
  friend bool operator==(const CameraPose&, const CameraPose&) = default;
};

struct VideoFragment {
  bool key = false;
  bool parity = false;  // index is then the group's
  std::uint32_t frame = 0;
  std::uint16_t index = 0;
  std::uint16_t count = 1;
  std::int64_t capture_ns = 0;
  std::uint32_t frame_bytes = 0;
  CameraPose pose;
  std::span<const std::uint8_t> data;  // borrowed
};

struct VideoFeedback {
  bool key_wanted = false;
  std::uint32_t newest_frame = 0;
  std::int64_t ground_time_ns = 0;
  std::uint32_t completed = 0;
  std::uint32_t lost = 0;
};

// A frame's fragments' payloads, in order, each group's parity after it (each ≤
// kVideoFragmentHeader + kVideoChunk bytes). Empty for a frame larger than kMaxVideoFrame or
// empty.
std::vector<std::vector<std::uint8_t>> fragment_frame(std::span<const std::uint8_t> frame,
                                                      std::uint32_t number, bool key,
                                                      std::int64_t capture_ns,
                                                      const CameraPose& pose = {});

// decode: an empty string, or what is wrong; `out.data` points into `bytes`.
std::string decode(std::span<const std::uint8_t> bytes, VideoFragment& out);
std::size_t encode(const VideoFeedback& m, std::span<std::uint8_t> out);
std::string decode(std::span<const std::uint8_t> bytes, VideoFeedback& m);

// The ground's side: fragments in any order into whole frames. A frame is delivered once,
// when its last fragment arrives; one overtaken by a newer complete frame (or older than the
// newest delivered) is dropped and counted lost, and the receiver asks for a key frame
// (key_wanted) until a key frame arrives whole, since what follows a lost frame may not
// decode.
struct AssembledFrame {
  std::uint32_t number = 0;
  bool key = false;
  std::int64_t capture_ns = 0;  // the remote's clock
  CameraPose pose;
  std::vector<std::uint8_t> data;
};

class FrameAssembler {
 public:
  // The frame `fragment` completes, if it does.
  std::optional<AssembledFrame> take(const VideoFragment& fragment);
  bool key_wanted() const { return key_wanted_; }
  std::uint32_t newest() const { return newest_; }
  std::uint32_t completed() const { return completed_; }
  std::uint32_t lost() const { return lost_; }
  std::uint32_t invalid() const { return invalid_; }
  std::uint32_t repaired() const { return repaired_; }  // fragments rebuilt from parity

 private:
  struct Partial {
    bool key = false;
    std::int64_t capture_ns = 0;
    CameraPose pose;
    std::uint16_t count = 0;
    std::uint16_t received = 0;
    std::vector<std::uint8_t> data;
    std::vector<bool> have;
    std::vector<std::vector<std::uint8_t>> parity;  // per group; empty: not arrived
  };
  // Rebuilds the group's one missing fragment if its parity and all the others are there.
  void repair(Partial& p, std::size_t group);
  std::map<std::uint32_t, Partial> partial_;
  bool any_ = false;
  std::uint32_t newest_ = 0;  // newest frame delivered
  bool key_wanted_ = true;    // until the first key frame
  std::uint32_t completed_ = 0;
  std::uint32_t lost_ = 0;
  std::uint32_t invalid_ = 0;
  std::uint32_t repaired_ = 0;
};

}  // namespace tether::datagram
