#pragma once

// VP9 video for the operator's camera views (libvpx, Debian's libvpx-dev).
//
// Why VP9: royalty-free, in Debian as a maintained library, decoded by the browsers' WebCodecs
// (codec string kVp9CodecString) and played by Foxglove's CompressedVideo, so a recording of
// the stream plays there too. H.264 through openh264 would do as well; VP9 needs no licence
// handling and its real-time mode (speed 8, cyclic-refresh AQ) keeps a 640 × 480 frame within a
// few milliseconds of one core.
//
// Real-time settings: constant bit rate, no look-ahead (every frame leaves as soon as it is
// encoded), error-resilient mode (a lost frame's successors still decode once a key frame or
// the references recover), and a key frame on request (a receiver that lost part of a frame
// asks for one) or every `key_frame_interval` frames.
//
// Images in: RGB, 3 bytes a pixel, top row first (what the renderer gives). Not real-time
// code: encode() takes milliseconds and may allocate inside libvpx.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tether::remote::camera {

// WebCodecs' name of what the encoder produces: VP9 profile 0, level 1.0 (any), 8 bits.
inline constexpr const char* kVp9CodecString = "vp09.00.10.08";

struct VideoEncoderOptions {
  int width = 640;              // [px], even
  int height = 480;             // [px], even
  double frame_rate = 15.0;     // [Hz] nominal, for the rate control
  int bit_rate = 1000;          // [kbit/s] target
  int key_frame_interval = 60;  // [frames] at most between key frames
  int speed = 8;                // libvpx cpu-used: 5 … 9, faster and coarser upward
  int threads = 1;
};

struct EncodedFrame {
  std::vector<std::uint8_t> data;  // one VP9 frame (superframe), as WebCodecs takes it
  bool key = false;
  std::uint64_t number = 0;  // frames encoded before it
};

class VideoEncoder {
 public:
  // Throws std::invalid_argument naming a field out of its range, std::runtime_error with
  // libvpx's message if the encoder cannot be set up.
  explicit VideoEncoder(const VideoEncoderOptions& options);
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  // Encodes one RGB image (width × height × 3 bytes) taken at `time` [s] (monotonic; only its
  // differences matter). False if libvpx failed (the frame is dropped); `out` may then be
  // empty also when the rate control skipped the frame.
  bool encode(std::span<const std::uint8_t> rgb, double time, EncodedFrame& out);

  // The next frame will be a key frame (a receiver lost part of one).
  void request_key_frame() { key_requested_ = true; }

  const VideoEncoderOptions& options() const { return options_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  VideoEncoderOptions options_;
  bool key_requested_ = true;  // the first frame is one anyway
  std::uint64_t frames_ = 0;
};

// Decodes VP9 frames back to RGB: the tests' check of what the operator sees, and a tool's.
class VideoDecoder {
 public:
  VideoDecoder();
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  // Decodes one frame into `rgb` (resized to width × height × 3); false if it does not
  // decode (corrupt, or its references are missing).
  bool decode(std::span<const std::uint8_t> frame, std::vector<std::uint8_t>& rgb, int& width,
              int& height);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// BT.601 limited-range conversions between RGB (3 bytes a pixel) and I420 planes.
void rgb_to_i420(std::span<const std::uint8_t> rgb, int width, int height, std::uint8_t* y,
                 int y_stride, std::uint8_t* u, int u_stride, std::uint8_t* v, int v_stride);
void i420_to_rgb(const std::uint8_t* y, int y_stride, const std::uint8_t* u, int u_stride,
                 const std::uint8_t* v, int v_stride, int width, int height,
                 std::span<std::uint8_t> rgb);

// Peak signal-to-noise ratio of two equally sized images [dB] (luma-agnostic: every byte).
double psnr(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

}  // namespace tether::remote::camera
