#pragma once

// The ground's end of a camera view (WatchCamera): the call that opens it and carries the
// site's counts, a UDP socket of its own on which the video's fragments arrive (sealed,
// tether/datagram/video_datagram.h) and from which feedback goes back every 200 ms (where
// the ground is, the key frame it needs, its clock), and the frames reassembled, in order.
//
// Frames reach the sink on the view's receiving thread. After a lost frame only a key frame
// is passed on (the decoder could not use what refers to the lost one) until one arrives.
// Capture times come in the site's clock and in the ground's: the offset between the clocks
// is estimated from the feedback's round trips (the least-delayed one wins), from the first
// reply on.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/common/types.h"

namespace tether::local {

struct VideoFrame {
  std::uint32_t number = 0;  // the view's numbering, from 0
  bool key = false;
  std::int64_t capture_remote_ns = 0;  // the site's CLOCK_MONOTONIC
  // The same instant on the ground's CLOCK_MONOTONIC (the clock offset applied); 0 before
  // the offset is known.
  std::int64_t capture_ground_ns = 0;
  std::int64_t arrival_ns = 0;  // the ground's CLOCK_MONOTONIC when it completed
  // Where the camera took it from, when the site knows: its frame C (SceneCamera's
  // convention) in the site's BASE.
  bool pose_known = false;
  Frame base_T_camera;
  std::vector<std::uint8_t> data;
};

struct CameraViewStats {
  bool open = false;   // the site answered; frames may come
  bool ended = false;  // the call ended (then `error` says why, if not asked to)
  std::string error;
  std::string codec;               // WebCodecs' name
  SceneCamera camera;              // as the site describes it
  std::uint64_t frames = 0;        // passed on
  std::uint64_t lost = 0;          // never completed
  std::uint64_t held_back = 0;     // complete, but after a loss and before a key frame
  std::uint64_t repaired = 0;      // fragments rebuilt from parity
  std::uint64_t bytes = 0;         // fragment payloads received
  std::uint64_t key_requests = 0;  // feedback datagrams asking for one
  std::uint64_t dropped = 0;       // datagrams not authentic, malformed or replayed
  // The site's side, from its last reply.
  std::uint64_t sent = 0;
  std::uint64_t sent_bytes = 0;
  double encode_ms = 0.0;
  bool clock_known = false;
  std::int64_t clock_offset_ns = 0;  // site minus ground
  std::int64_t round_trip_ns = 0;    // of the estimate in use
};

using VideoFrameSink = std::function<void(const VideoFrame& frame)>;

class CameraView {
 public:
  struct Connection;  // the call's stub and credentials (remote_site_client.cc)

  // Opens the view at once; failures to open arrive as stats().ended with the error.
  CameraView(std::shared_ptr<Connection> connection, std::string camera, int bit_rate_kbps,
             VideoFrameSink sink);
  ~CameraView();  // ends the call and the receiving, waiting for a sink call in progress
  CameraView(const CameraView&) = delete;
  CameraView& operator=(const CameraView&) = delete;

  const std::string& camera() const { return camera_; }
  // Asks the site for a key frame (the frames' consumer dropped some).
  void request_key_frame();
  CameraViewStats stats() const;

 private:
  struct Impl;
  std::string camera_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::local
