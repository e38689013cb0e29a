#pragma once

// `tether camera NAME`: watches one of a site's cameras from the command line for a while, the
// way the console does (CameraView on the datagram plane), decodes every frame and reports
// what arrived: frames decoded intact, lost and held back, the bit rate received, and the age
// of each frame on arrival (capture time on the site's clock, put on the ground's by the
// link's estimate). Optionally writes the frames as they arrived to an IVF file (VP9), which
// ffplay, VLC or GStreamer play. The figures for the cameras' benchmarks
// (deploy/video-cost.sh) come from here.

#include <cstdint>
#include <ostream>
#include <string>

#include "tether/local/link/remote_site_client.h"

namespace tether::local {

struct CameraWatchOptions {
  std::string camera;
  double duration = 10.0;  // [s]
  int bit_rate_kbps = 0;   // 0: the site's default
  std::string ivf_path;    // empty: none
};

struct CameraWatchReport {
  CameraViewStats view;           // the view's own counts at the end
  std::uint64_t decoded = 0;      // frames passed on that decoded
  std::uint64_t undecodable = 0;  // frames passed on that did not
  std::uint64_t with_pose = 0;    // frames that carried the camera's pose
  double seconds = 0.0;           // from the first frame to the end [s]
  double kbit_per_s = 0.0;        // fragment payloads received over `seconds`
  double frames_per_s = 0.0;      // decoded over `seconds`
  // Capture → complete on the ground [ms], over the frames whose capture time was known.
  double age_p50_ms = 0.0;
  double age_p99_ms = 0.0;
  double age_max_ms = 0.0;
  std::uint64_t aged = 0;
};

// Watches until the duration has passed or the view ends. Throws std::runtime_error when the
// view ends with an error before the duration (an unknown camera, a refusal) or the IVF file
// cannot be written.
CameraWatchReport watch_camera_for(RemoteSiteClient& site, const CameraWatchOptions& options);

// "key value" lines, one figure each (deploy/lib/loop-figures.sh's `field` reads them).
void print_report(std::ostream& out, const CameraWatchReport& report);

}  // namespace tether::local
