#pragma once

// The one interface between the executor and an arm: the embedded MuJoCo arm implements
// it, and so would a hardware driver. The executor sends joint position commands to the
// arm's own joint servo loops every control period, as in the extended-task-space patent.
//
// All calls are made from the control-loop thread, once per cycle, in the order
// read → write → advance. None may allocate, lock a contended mutex or throw.

#include <array>
#include <cstdint>

#include "tether/common/arm_model.h"
#include "tether/common/types.h"

namespace tether::remote {

// A range/tilt proximity sensor reading, in the sensor frame L (task_parameters.h:
// L's z points from the surface to the sensor; the beam travels along −z).
struct ProximityReading {
  bool valid = false;                         // false: nothing within range
  double distance = 0.0;                      // [m] along the beam
  Vector3 surface_normal = Vector3::UnitZ();  // unit, L axes, pointing at the sensor
};

// What a camera saw of the visual-tracking target: its position in the camera frame C
// (z along the optical axis, out of the lens; x right and y down in the image), estimated
// from one image. A frame whose image does not hold the whole target is not valid. The
// reading stays until the next frame arrives, which `frame` counts.
struct VisualReading {
  std::uint64_t frame = 0;                     // frames delivered so far (0: none yet)
  bool valid = false;                          // the target was in view in that frame
  double capture_time = 0.0;                   // [s] arm clock: when the image was taken
  Vector3 target_in_camera = Vector3::Zero();  // [m] C axes, from the C origin
};

struct ArmState {
  double time = 0.0;                           // [s] arm clock
  JointVector position = JointVector::Zero();  // measured q [rad]
  JointVector velocity = JointVector::Zero();  // measured q̇ [rad/s]
  // Wrench the robot applies to its environment, about the TOOL origin in TOOL axes
  // [N, N·m], including the weight of the tool below the sensor (not compensated).
  Vector6 wrench = Vector6::Zero();
  bool wrench_valid = false;
  ProximityReading proximity;
  VisualReading visual;  // a wrist camera's measurement (visual tracking); none: frame 0
  // Interface-specific observations for logs and scenario checks (the simulated door
  // scene reports its hinge angle in aux[0] [rad]); never used for control.
  std::array<double, 4> aux{};
};

struct JointCommand {
  JointVector position = JointVector::Zero();  // [rad]
  JointVector velocity = JointVector::Zero();  // [rad/s] feed-forward
};

// The arm's complete dynamic state at one instant, as opaque numbers only the arm that wrote
// it reads back: what a replay (remote_site/tools) restarts a simulated arm from so that it
// reproduces the same readings bit for bit. Fixed size: taking one never allocates.
inline constexpr std::size_t kMaxArmCheckpoint = 128;
struct ArmCheckpoint {
  std::uint32_t size = 0;  // values in use; 0: none (the arm cannot checkpoint)
  std::array<double, kMaxArmCheckpoint> values{};
};

enum class ArmStatus {
  kOk,
  kNotReady,  // no state yet
  kCommunicationLost,
  kFault,  // the arm's own protection tripped
};

const char* to_string(ArmStatus status);

class ArmInterface {
 public:
  virtual ~ArmInterface() = default;

  virtual const ArmModel& model() const = 0;
  virtual ArmStatus read(ArmState& state) noexcept = 0;
  virtual ArmStatus write(const JointCommand& command) noexcept = 0;
  // Lets a simulated arm integrate its physics to `time` [s] after the command was written
  // (lock-step: real-time and batch runs are identical, only the pacing differs). A
  // hardware driver runs on its own clock and ignores it.
  virtual void advance_to(double /*time*/) noexcept {}
  // Copies the state the last read() reported (after the last advance_to()) into `out`;
  // false (size 0) for an arm that cannot (real hardware). Loop thread; never allocates.
  virtual bool checkpoint(ArmCheckpoint& out) const noexcept {
    out.size = 0;
    return false;
  }
  // Puts the arm back into a state checkpoint() took on an arm built the same way: read()
  // then returns what it returned then. Set-up only (replay); false if `state` does not fit.
  virtual bool restore(const ArmCheckpoint& /*state*/) { return false; }
};

}  // namespace tether::remote
