#pragma once

// Parameters of the proximity behaviour (the member `proximity` of TaskParameters and message
// tether.v1.ProximityParameters) and their validation. Frames, units and sign conventions as in
// tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Proximity (eq. 24-26). Sensor frame L on the tool: its z axis points from the surface to
// the sensor (the beam goes along −z), so eq. 25 as written, v_z = k_d (d_r − d_a), backs
// away when too close. Tilt: rotation (axis k, angle θ) from L's z to the surface normal,
// ω = k_θ θ k.
struct ProximityParameters {
  bool enabled = false;
  double reference_distance = 0.1;  // d_r [m]
  double distance_gain = 2.0;       // k_d [1/s]
  double tilt_gain = 2.0;           // k_θ [1/s]
  Frame tool_T_sensor;              // L
  InputKind input = InputKind::kVelocity;
  MotionVector damping = MotionVector::Constant(350.0);
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const ProximityParameters& parameters, TaskChecker& check);

}  // namespace tether
