#include "tether/remote/camera/video_codec.h"

#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vpx_encoder.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace tether::remote::camera {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void require(bool ok, const char* field, double value, const char* rule) {
  if (!ok) {
    throw std::invalid_argument(std::string("video encoder: ") + field + " = " + number(value) +
                                ": must be " + rule);
  }
}

std::uint8_t clamp_byte(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

void rgb_to_i420(std::span<const std::uint8_t> rgb, int width, int height, std::uint8_t* y,
                 int y_stride, std::uint8_t* u, int u_stride, std::uint8_t* v, int v_stride) {
  for (int row = 0; row < height; ++row) {
    const std::uint8_t* p = rgb.data() + static_cast<std::size_t>(row) * width * 3;
    std::uint8_t* yr = y + static_cast<std::ptrdiff_t>(row) * y_stride;
    for (int col = 0; col < width; ++col, p += 3) {
      yr[col] = clamp_byte(((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) >> 8) + 16);
    }
  }
  // Chroma of each 2 × 2 block from its mean colour.
  for (int row = 0; row < height / 2; ++row) {
    for (int col = 0; col < width / 2; ++col) {
      int r = 0;
      int g = 0;
      int b = 0;
      for (int k = 0; k < 4; ++k) {
        const int yi = 2 * row + k / 2;
        const int xi = 2 * col + k % 2;
        const auto y = static_cast<std::size_t>(yi);
        const auto x = static_cast<std::size_t>(xi);
        const std::size_t i = (y * static_cast<std::size_t>(width) + x) * 3;
        r += rgb[i];
        g += rgb[i + 1];
        b += rgb[i + 2];
      }
      r /= 4;
      g /= 4;
      b /= 4;
      u[static_cast<std::ptrdiff_t>(row) * u_stride + col] =
          clamp_byte(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128);
      v[static_cast<std::ptrdiff_t>(row) * v_stride + col] =
          clamp_byte(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128);
    }
  }
}

void i420_to_rgb(const std::uint8_t* y, int y_stride, const std::uint8_t* u, int u_stride,
                 const std::uint8_t* v, int v_stride, int width, int height,
                 std::span<std::uint8_t> rgb) {
  for (int row = 0; row < height; ++row) {
    for (int col = 0; col < width; ++col) {
      const int c = y[static_cast<std::ptrdiff_t>(row) * y_stride + col] - 16;
      const int d = u[static_cast<std::ptrdiff_t>(row / 2) * u_stride + col / 2] - 128;
      const int e = v[static_cast<std::ptrdiff_t>(row / 2) * v_stride + col / 2] - 128;
      std::uint8_t* p = rgb.data() + (static_cast<std::size_t>(row) * width + col) * 3;
      p[0] = clamp_byte((298 * c + 409 * e + 128) >> 8);
      p[1] = clamp_byte((298 * c - 100 * d - 208 * e + 128) >> 8);
      p[2] = clamp_byte((298 * c + 516 * d + 128) >> 8);
    }
  }
}

double psnr(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  if (a.size() != b.size() || a.empty()) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += d * d;
  }
  const double mse = sum / static_cast<double>(a.size());
  return mse <= 0.0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

struct VideoEncoder::Impl {
  vpx_codec_ctx_t codec{};
  vpx_image_t image{};
  bool codec_made = false;
  bool image_made = false;
  double first_time = -1.0;
  ~Impl() {
    if (codec_made) vpx_codec_destroy(&codec);
    if (image_made) vpx_img_free(&image);
  }
};

VideoEncoder::VideoEncoder(const VideoEncoderOptions& options)
    : impl_(std::make_unique<Impl>()), options_(options) {
  const VideoEncoderOptions& o = options;
  require(o.width >= 16 && o.width <= 4096 && o.width % 2 == 0, "width", o.width,
          "even and in [16, 4096] px");
  require(o.height >= 16 && o.height <= 4096 && o.height % 2 == 0, "height", o.height,
          "even and in [16, 4096] px");
  require(o.frame_rate > 0.0 && o.frame_rate <= 120.0, "frame_rate", o.frame_rate,
          "in (0, 120] Hz");
  require(o.bit_rate >= 50 && o.bit_rate <= 20000, "bit_rate", o.bit_rate, "in [50, 20000] kbit/s");
  require(o.key_frame_interval >= 1 && o.key_frame_interval <= 1000, "key_frame_interval",
          o.key_frame_interval, "in [1, 1000] frames");
  require(o.speed >= 5 && o.speed <= 9, "speed", o.speed, "in [5, 9]");
  require(o.threads >= 1 && o.threads <= 8, "threads", o.threads, "in [1, 8]");

  vpx_codec_enc_cfg_t cfg{};
  if (vpx_codec_enc_config_default(vpx_codec_vp9_cx(), &cfg, 0) != VPX_CODEC_OK) {
    throw std::runtime_error("video encoder: libvpx has no VP9 encoder configuration");
  }
  cfg.g_w = static_cast<unsigned>(o.width);
  cfg.g_h = static_cast<unsigned>(o.height);
  cfg.g_timebase = {1, 1000};  // timestamps in milliseconds
  cfg.g_threads = static_cast<unsigned>(o.threads);
  cfg.g_lag_in_frames = 0;
  cfg.g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT;
  cfg.g_pass = VPX_RC_ONE_PASS;
  cfg.rc_end_usage = VPX_CBR;
  cfg.rc_target_bitrate = static_cast<unsigned>(o.bit_rate);
  cfg.rc_min_quantizer = 4;
  cfg.rc_max_quantizer = 56;
  cfg.rc_undershoot_pct = 50;
  cfg.rc_overshoot_pct = 50;
  cfg.rc_buf_sz = 1000;  // [ms]
  cfg.rc_buf_initial_sz = 600;
  cfg.rc_buf_optimal_sz = 600;
  cfg.rc_dropframe_thresh = 0;  // never drop: a frame the operator waits for is shown
  cfg.kf_mode = VPX_KF_AUTO;
  cfg.kf_min_dist = 0;
  cfg.kf_max_dist = static_cast<unsigned>(o.key_frame_interval);
  if (vpx_codec_enc_init(&impl_->codec, vpx_codec_vp9_cx(), &cfg, 0) != VPX_CODEC_OK) {
    throw std::runtime_error(std::string("video encoder: libvpx refused the VP9 settings: ") +
                             vpx_codec_error_detail(&impl_->codec));
  }
  impl_->codec_made = true;
  vpx_codec_control(&impl_->codec, VP8E_SET_CPUUSED, o.speed);
  vpx_codec_control(&impl_->codec, VP9E_SET_AQ_MODE, 3);  // cyclic refresh, for real time
  vpx_codec_control(&impl_->codec, VP9E_SET_TUNE_CONTENT, VP9E_CONTENT_DEFAULT);
  vpx_codec_control(&impl_->codec, VP9E_SET_NOISE_SENSITIVITY, 0);
  vpx_codec_control(&impl_->codec, VP9E_SET_TILE_COLUMNS, 0);
  vpx_codec_control(&impl_->codec, VP9E_SET_ROW_MT, 0);
  if (vpx_img_alloc(&impl_->image, VPX_IMG_FMT_I420, static_cast<unsigned>(o.width),
                    static_cast<unsigned>(o.height), 16) == nullptr) {
    throw std::runtime_error("video encoder: could not allocate the frame buffer");
  }
  impl_->image_made = true;
}

VideoEncoder::~VideoEncoder() = default;

bool VideoEncoder::encode(std::span<const std::uint8_t> rgb, double time, EncodedFrame& out) {
  out.data.clear();
  out.key = false;
  const VideoEncoderOptions& o = options_;
  if (rgb.size() != static_cast<std::size_t>(o.width) * o.height * 3) return false;
  vpx_image_t& img = impl_->image;
  rgb_to_i420(rgb, o.width, o.height, img.planes[VPX_PLANE_Y], img.stride[VPX_PLANE_Y],
              img.planes[VPX_PLANE_U], img.stride[VPX_PLANE_U], img.planes[VPX_PLANE_V],
              img.stride[VPX_PLANE_V]);
  if (impl_->first_time < 0.0) impl_->first_time = time;
  const auto pts = static_cast<vpx_codec_pts_t>(std::llround((time - impl_->first_time) * 1e3));
  const auto duration = static_cast<unsigned long>(std::max(1.0, 1e3 / o.frame_rate));
  const vpx_enc_frame_flags_t flags = key_requested_ ? VPX_EFLAG_FORCE_KF : 0;
  if (vpx_codec_encode(&impl_->codec, &img, pts, duration, flags, VPX_DL_REALTIME) !=
      VPX_CODEC_OK) {
    return false;
  }
  key_requested_ = false;
  vpx_codec_iter_t iter = nullptr;
  while (const vpx_codec_cx_pkt_t* pkt = vpx_codec_get_cx_data(&impl_->codec, &iter)) {
    if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) continue;
    const auto* bytes = static_cast<const std::uint8_t*>(pkt->data.frame.buf);
    out.data.insert(out.data.end(), bytes, bytes + pkt->data.frame.sz);
    out.key = out.key || (pkt->data.frame.flags & VPX_FRAME_IS_KEY) != 0;
  }
  out.number = frames_++;
  return true;
}

struct VideoDecoder::Impl {
  vpx_codec_ctx_t codec{};
  bool made = false;
  ~Impl() {
    if (made) vpx_codec_destroy(&codec);
  }
};

VideoDecoder::VideoDecoder() : impl_(std::make_unique<Impl>()) {
  if (vpx_codec_dec_init(&impl_->codec, vpx_codec_vp9_dx(), nullptr, 0) != VPX_CODEC_OK) {
    throw std::runtime_error("video decoder: libvpx has no VP9 decoder");
  }
  impl_->made = true;
}

VideoDecoder::~VideoDecoder() = default;

bool VideoDecoder::decode(std::span<const std::uint8_t> frame, std::vector<std::uint8_t>& rgb,
                          int& width, int& height) {
  if (vpx_codec_decode(&impl_->codec, frame.data(), static_cast<unsigned>(frame.size()), nullptr,
                       0) != VPX_CODEC_OK) {
    return false;
  }
  vpx_codec_iter_t iter = nullptr;
  const vpx_image_t* img = vpx_codec_get_frame(&impl_->codec, &iter);
  if (img == nullptr || img->fmt != VPX_IMG_FMT_I420) return false;
  width = static_cast<int>(img->d_w);
  height = static_cast<int>(img->d_h);
  rgb.resize(static_cast<std::size_t>(width) * height * 3);
  i420_to_rgb(img->planes[VPX_PLANE_Y], img->stride[VPX_PLANE_Y], img->planes[VPX_PLANE_U],
              img->stride[VPX_PLANE_U], img->planes[VPX_PLANE_V], img->stride[VPX_PLANE_V], width,
              height, rgb);
  return true;
}

}  // namespace tether::remote::camera
