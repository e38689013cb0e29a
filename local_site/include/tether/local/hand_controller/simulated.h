#pragma once

// A simulated 6-DOF hand controller with its own kinematics and actuators, held by a
// simulated operator hand, so force reflection can be rendered and checked without hardware.
//
// Mechanism: a serial 6R arm on a desk — a waist, a shoulder and an elbow, then a spherical
// wrist. In the mechanism base frame MB at θ = 0 (z up, upper arm and forearm along +x):
//   J1 axis z through (0, 0, 0)             J4 axis x through the wrist centre W
//   J2 axis y through (0, 0, l1)            J5 axis y through W
//   J3 axis y through (l2, 0, l1)           J6 axis z through W = (l2 + l3, 0, l1)
// with l1 = base_height, l2 = upper_arm, l3 = forearm. The wrist frame sits at W with MB's
// axes at θ = 0; the handle frame HH is wrist_T_handle in it, and the mechanism base is
// hb_T_mechanism in the device base frame HB. Forward kinematics is the product of
// exponentials; J_hc (HB or HH axes) maps θ̇ to the handle twist at the HH origin. Wrist
// singularity at θ5 = ±π/2, elbow singularity at θ3 = 0 (arm stretched): the default
// starting configuration stays clear of both.
//
// Dynamics (gravity-compensated, no coupling between joints):
//   I θ̈ = τ_act + J_HBᵀ F_hand − D θ̇,    semi-implicit Euler with sub-steps ≤ step
// The operator's hand is an impedance pulling the handle toward a hand target pose:
//   F_hand = [k_t (p_t − p) + b_t (v_t − v);  k_r log(R_t Rᵀ) + b_r (ω_t − ω)]   (HB axes,
//   at the HH origin), the wrench the hand applies to the handle.
// The target starts at the handle's pose and moves with a script's rates (script.h), or holds
// still. A rendered τ = J_HBᵀ F therefore settles where F_hand = −F: the handle is pushed
// F / k against the hand — translation F_f / k_t, rotation vector F_τ / k_r.
//
// eq. 32/33: each sample differences the joint positions, Δθ = θ[n] − θ[n−1], and maps them
// with the Jacobians at the mid configuration: increment_handle = HH J_hc Δθ,
// increment_base = HB J_hc Δθ. The arm-angle trigger, deadman and clutch follow the script
// (with no script the deadman is held and the clutch released).

#include <array>
#include <memory>
#include <optional>

#include "tether/local/hand_controller/hand_controller.h"
#include "tether/local/hand_controller/script.h"

namespace tether::local {

using HandJointVector = Vector6;

struct HandControllerGeometry {
  double base_height = 0.12;  // l1 [m], in (0, 1]
  double upper_arm = 0.20;    // l2 [m], in (0, 1]
  double forearm = 0.20;      // l3 [m], in (0, 1]
  Frame hb_T_mechanism;       // MB in HB
  Frame wrist_T_handle;       // HH in the wrist frame
};

class HandControllerKinematics {
 public:
  explicit HandControllerKinematics(const HandControllerGeometry& geometry);

  Frame forward(const HandJointVector& theta) const;  // HB_T_HH
  // J_hc: rows (v, ω) of the HH origin, in HB axes (kBase) or HH axes (kHandle).
  Matrix6 jacobian(const HandJointVector& theta, HandFrame frame) const;
  const HandControllerGeometry& geometry() const { return geometry_; }

 private:
  HandControllerGeometry geometry_;
  std::array<Vector3, 6> axis_;   // joint axes at θ = 0, MB
  std::array<Vector3, 6> point_;  // a point on each axis, MB
  Frame home_;                    // MB_T_HH at θ = 0
};

struct OperatorHandConfig {
  double translation_stiffness = 300.0;  // k_t [N/m], in (0, 1e4]
  double rotation_stiffness = 2.0;       // k_r [N·m/rad], in (0, 100]
  double translation_damping = 15.0;     // b_t [N·s/m], in [0, 1e3]
  double rotation_damping = 0.05;        // b_r [N·m·s/rad], in [0, 10]
};

struct SimulatedHandControllerConfig {
  HandControllerGeometry geometry;
  OperatorHandConfig hand;
  HandJointVector initial_joints = (HandJointVector() << 0.0, -0.5, 1.0, 0.0, -0.5, 0.0).finished();
  HandJointVector joint_inertia =  // I [kg·m²], each in (0, 10]
      (HandJointVector() << 0.02, 0.02, 0.01, 0.001, 0.001, 0.001).finished();
  HandJointVector joint_damping =  // D [N·m·s/rad], each in [0, 10]
      (HandJointVector() << 0.05, 0.05, 0.03, 0.002, 0.002, 0.002).finished();
  double step = 5e-4;  // [s] largest integration sub-step, in [1e-5, 2e-3]
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const SimulatedHandControllerConfig& config);

class SimulatedHandController final : public HandController {
 public:
  // Without a script the operator's hand holds still with the deadman held.
  explicit SimulatedHandController(const SimulatedHandControllerConfig& config = {},
                                   std::optional<HandScript> script = std::nullopt);

  std::string describe() const override;
  DeviceSample sample(double now) override;
  bool has_actuators() const override { return true; }
  void render(const Eigen::Ref<const Vector6>& actuator_torques) override;
  Matrix6 jacobian(HandFrame frame) const override;

  const HandJointVector& joints() const { return theta_; }
  const HandJointVector& joint_velocities() const { return theta_dot_; }
  Frame handle_pose() const { return kinematics_.forward(theta_); }  // HB_T_HH
  const Frame& hand_target() const { return target_.pose(); }        // HB_T_target
  const Vector6& hand_wrench() const { return hand_wrench_; }        // on the handle, HB, at HH
  const Vector6& actuator_torques() const { return tau_; }
  const HandControllerKinematics& kinematics() const { return kinematics_; }

 private:
  void step(double t, double h);

  SimulatedHandControllerConfig config_;
  HandControllerKinematics kinematics_;
  std::optional<HandScript> script_;
  VirtualHandle target_;
  HandJointVector theta_;
  HandJointVector theta_dot_ = HandJointVector::Zero();
  HandJointVector theta_sampled_;  // θ at the previous sample
  Vector6 tau_ = Vector6::Zero();
  Vector6 hand_wrench_ = Vector6::Zero();
  Matrix6 jacobian_base_;
  Matrix6 jacobian_handle_;
  double last_time_ = 0.0;
  double origin_ = 0.0;
  bool started_ = false;
};

}  // namespace tether::local
