#pragma once

// Shared part of the 6-axis devices (evdev, joystick): axis levels become rates, buttons
// become the deadman, the clutch, scale steps and the arm-angle trigger.
//
// Axes 0..5 are the device's x, y, z, rx, ry, rz (evdev REL_X..REL_RZ or ABS_X..ABS_RZ,
// joystick axes 0..5). Each is a level centred on zero — a SpaceMouse reports the cap's
// displacement, not a motion delta, even on its REL axes — held until the next event:
//   level' = axis_sign[i] · (|raw| − deadband) / (full_scale − deadband), 0 inside the
//            deadband, clamped to ±1
//   v_HB = hb_R_device · linear_rate · level'[0..2],  ω_HB = hb_R_device · angular_rate ·
//   level'[3..5]   (in HH axes instead when handle_axes)
// Buttons are held switches: the deadman and the clutch are on while held; a press of a scale
// button is one step; the arm-angle buttons drive ψ at ±arm_angle_rate while held.

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "tether/local/hand_controller/rate_device.h"

namespace asio {
class io_context;
}

namespace tether::local {

namespace detail {
class FdReader;
}

struct AxisDeviceConfig {
  double full_scale = 350.0;    // [counts] raw value of a full deflection (SpaceMouse ≈ 350)
  double deadband = 15.0;       // [counts] in [0, full_scale)
  double linear_rate = 0.05;    // [m/s] at full deflection, in (0, 1]
  double angular_rate = 0.5;    // [rad/s] at full deflection, in (0, 10]
  double arm_angle_rate = 0.3;  // [rad/s] while an arm-angle button is held, in (0, 10]
  std::array<double, 6> axis_sign{1, 1, 1, 1, 1, 1};  // each +1 or −1
  Matrix3 hb_R_device = Matrix3::Identity();          // device axes in HB axes (a rotation)
  bool handle_axes = false;
  // Button codes (evdev key codes such as BTN_0 = 0x100; joystick button numbers); −1: none.
  int deadman_button = 0x100;     // BTN_0
  int clutch_button = 0x101;      // BTN_1
  int scale_up_button = 0x102;    // BTN_2
  int scale_down_button = 0x103;  // BTN_3
  int arm_up_button = 0x104;      // BTN_4
  int arm_down_button = 0x105;    // BTN_5

  // A joystick: full-range axes and buttons numbered from 0.
  static AxisDeviceConfig joystick_defaults();
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const AxisDeviceConfig& config);

// A device node delivering fixed-size event records; the drivers decode one record each.
class AxisHandController : public RateHandController {
 public:
  ~AxisHandController() override;
  std::string describe() const override { return kind_ + " " + name_; }

 protected:
  // Reads `fd` (closed on destruction if `owns_fd`); `kind` and `name` are for describe().
  AxisHandController(asio::io_context& io, int fd, bool owns_fd, std::string kind, std::string name,
                     std::size_t record_size, const AxisDeviceConfig& config);

  RateCommand command_at(double t) const override;
  void poll(double now, DeviceSample& out) final;
  // Decodes one record of record_size bytes (unaligned) into on_axis / on_button calls.
  virtual void on_record(const unsigned char* bytes, DeviceSample& out) = 0;
  void on_axis(int axis, double raw);
  void on_button(int code, bool pressed, DeviceSample& out);

 private:
  AxisDeviceConfig config_;
  std::string kind_;
  std::string name_;
  std::unique_ptr<detail::FdReader> reader_;
  std::size_t record_size_;
  std::array<unsigned char, 1536> buffer_{};  // 64 input_event or 192 js_event records
  std::size_t filled_ = 0;
  std::array<double, 6> level_{};  // normalised, after deadband and sign
  bool deadman_ = false;
  bool clutch_ = false;
  bool arm_up_ = false;
  bool arm_down_ = false;
};

}  // namespace tether::local
