#include "tether/remote/sim/scene.h"

#include <Eigen/SVD>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "tether/common/dls.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"

namespace tether::remote {

const char* to_string(SceneKind kind) {
  switch (kind) {
    case SceneKind::kFreeSpace:
      return "free space";
    case SceneKind::kDoor:
      return "door";
    case SceneKind::kWall:
      return "wall";
    case SceneKind::kObstacles:
      return "obstacles";
    case SceneKind::kProximityTarget:
      return "proximity target";
    case SceneKind::kVisualTarget:
      return "visual target";
  }
  return "unknown";
}

const char* scene_name(SceneKind kind) {
  switch (kind) {
    case SceneKind::kFreeSpace:
      return "free";
    case SceneKind::kDoor:
      return "door";
    case SceneKind::kWall:
      return "wall";
    case SceneKind::kObstacles:
      return "obstacles";
    case SceneKind::kProximityTarget:
      return "proximity";
    case SceneKind::kVisualTarget:
      return "target";
  }
  return "unknown";
}

std::optional<SceneKind> scene_from_name(std::string_view name) {
  for (const SceneKind kind :
       {SceneKind::kFreeSpace, SceneKind::kDoor, SceneKind::kWall, SceneKind::kObstacles,
        SceneKind::kProximityTarget, SceneKind::kVisualTarget}) {
    if (name == scene_name(kind)) return kind;
  }
  return std::nullopt;
}

WristComplianceParameters wrist_compliance_from_spec(std::string_view spec) {
  WristComplianceParameters out;
  if (spec == "default") return out;
  if (spec == "rigid") {
    out.enabled = false;
    return out;
  }
  const auto fail = [&](const std::string& problem) {
    throw std::invalid_argument("wrist stiffness '" + std::string(spec) + "': " + problem +
                                " (expected rigid, default or K_T:K_R, e.g. 5000:500)");
  };
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) fail("no ':' between K_T and K_R");
  const auto number = [&](std::string_view text, const char* name, double low, double high) {
    const std::string copy(text);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value)) {
      fail(std::string(name) + " '" + copy + "' is not a number");
    }
    if (value < low || value > high) {
      char range[64];
      std::snprintf(range, sizeof(range), "[%.10g, %.10g]", low, high);
      fail(std::string(name) + " = " + copy + " is outside " + range);
    }
    return value;
  };
  const double k_t = number(spec.substr(0, colon), "K_T [N/m]", 100.0, 1e7);
  const double k_r = number(spec.substr(colon + 1), "K_R [N·m/rad]", 1.0, 1e5);
  out.translational_damping *= std::sqrt(k_t / out.translational_stiffness);
  out.rotational_damping *= std::sqrt(k_r / out.rotational_stiffness);
  out.translational_stiffness = k_t;
  out.rotational_stiffness = k_r;
  return out;
}

bool solve_tool_pose(const KinematicModel& model, const Frame& base_T_tool, double arm_angle,
                     JointVector& q) {
  const ArmAngleModel arm_angle_model;
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  JointVector dq;
  // Light damping: the solve must converge exactly away from singularities, and stay
  // bounded near them (the step limit keeps each linearisation local).
  const JointVector damping = JointVector::Constant(1e-6);
  const MotionVector weights = MotionVector::Ones();
  for (int iteration = 0; iteration < 300; ++iteration) {
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, arm_angle_model, Frame::Identity(), J, psi);
    MotionVector error;
    error.head<3>() = base_T_tool.p - state.tool.p;
    error.segment<3>(3) = orientation_error(base_T_tool.R, state.tool.R);
    error[6] = wrap_angle(arm_angle - psi.psi);
    if (!error.allFinite()) return false;
    if (error.norm() < 1e-9) return true;
    weighted_dls<7>(J, weights, damping, error, dq);
    const double norm = dq.norm();
    if (norm > 0.2) dq *= 0.2 / norm;
    q = (q + dq).cwiseMax(model.lower_limits()).cwiseMin(model.upper_limits());
  }
  return false;
}

namespace {

// TOOL orientation of the shared initial posture: z along BASE +x, x along BASE −z.
Matrix3 initial_tool_rotation() {
  Matrix3 R;
  R.col(0) = -Vector3::UnitZ();
  R.col(1) = Vector3::UnitY();
  R.col(2) = Vector3::UnitX();
  return R;
}

// Smallest distance to a joint limit and smallest singular value of the composite
// Jacobian along the door arc 0…55° from the TOOL pose `start`, at constant arm angle
// (what the executor does when it opens the door). Negative if the solve fails.
double door_arc_score(const KinematicModel& model, const Frame& start, JointVector q) {
  const DoorParameters door;
  const GripperParameters gripper;
  const Frame hinge = start * door_hinge_in_tool(door, gripper);
  const Vector3 axis = hinge.R.col(0);
  const ArmAngleModel arm_angle_model;
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  double score = std::numeric_limits<double>::infinity();
  constexpr double kPi = 3.14159265358979323846;
  for (int degrees = 0; degrees <= 55; degrees += 5) {
    const Matrix3 R = so3_exp(axis * (degrees * kPi / 180.0));
    const Frame rotation{R, hinge.p - R * hinge.p};
    if (!solve_tool_pose(model, rotation * start, 0.0, q)) return -1.0;
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, arm_angle_model, Frame::Identity(), J, psi);
    if (psi.status != ArmAngleStatus::kOk) return -1.0;
    const double margin =
        std::min((q - model.lower_limits()).minCoeff(), (model.upper_limits() - q).minCoeff());
    const Eigen::JacobiSVD<CompositeJacobian> svd(J);
    // 3× puts a singular value of 0.1 (m or rad per rad) level with 0.3 rad of limit margin.
    score = std::min({score, margin, 3.0 * svd.singularValues()[6]});
  }
  return score;
}

}  // namespace

JointVector default_initial_position(SceneKind /*scene*/, const ArmModel& arm) {
  const KinematicModel model(arm);
  KinematicState zero;
  forward_kinematics(model, JointVector::Zero(), zero);
  const Vector3 shoulder = zero.shoulder;
  const double reach = (zero.elbow - zero.shoulder).norm() + (zero.wrist - zero.elbow).norm();
  const double wrist_to_tool = (zero.tool.p - zero.wrist).norm();
  if (!(reach > 0.05)) {
    throw std::runtime_error("default_initial_position: arm '" + arm.name +
                             "' has no shoulder-elbow-wrist reach");
  }

  // Seeds: the limit mid-points, and bent elbow-up postures of both wrist flips.
  std::array<JointVector, 3> seeds;
  seeds[0] = 0.5 * (model.lower_limits() + model.upper_limits());
  seeds[1] << 0.0, 0.6, 0.0, -1.6, 0.0, 1.0, 0.0;
  seeds[2] << 0.0, 0.3, 0.0, -1.8, 0.0, 2.0, 0.8;
  for (JointVector& seed : seeds) {
    seed = seed.cwiseMax(model.lower_limits()).cwiseMin(model.upper_limits());
  }

  const Matrix3 R = initial_tool_rotation();
  double best_score = 0.05;
  JointVector best = JointVector::Zero();
  bool found = false;
  for (const double height : {0.0, -0.2, 0.2, -0.4, -0.6}) {
    for (const double forward : {0.9, 0.8, 0.7, 0.6}) {
      for (const double lateral : {0.0, -0.25}) {
        const Frame start{R, shoulder + Vector3(forward * reach + wrist_to_tool, lateral * reach,
                                                height * reach)};
        for (const JointVector& seed : seeds) {
          JointVector q = seed;
          if (!solve_tool_pose(model, start, 0.0, q)) continue;
          // A handle nearer shoulder height is preferred (0.1 of score per reach of offset):
          // it keeps the classic elbow-up reaching posture of the extended-task-space patent's
          // FIG. 4.
          const double score = door_arc_score(model, start, q) - 0.1 * std::abs(height);
          if (score > best_score) {
            best_score = score;
            best = q;
            found = true;
          }
          break;
        }
      }
    }
  }
  if (!found) {
    throw std::runtime_error("default_initial_position: no initial posture of arm '" + arm.name +
                             "' (" + arm.source +
                             ") can follow the door arc with the TOOL horizontal");
  }
  return best;
}

std::vector<Sphere> default_obstacles(const ArmModel& arm, const JointVector& q) {
  const KinematicModel model(arm);
  KinematicState state;
  forward_kinematics(model, q, state);
  const Vector3 upper = state.elbow - state.shoulder;
  const Vector3 lower = state.wrist - state.elbow;
  Vector3 normal = upper.cross(lower);
  if (normal.norm() < 1e-6) normal = upper.unitOrthogonal();
  normal.normalize();
  Vector3 up = Vector3::UnitZ() - Vector3::UnitZ().dot(normal) * normal;
  up = up.norm() > 1e-6 ? up.normalized() : normal.unitOrthogonal();
  // Links are capsules of radius ≤ 0.06 m; keep ≥ 6 cm of free space around them.
  constexpr double kClearance = 0.12;
  std::vector<Sphere> spheres;
  spheres.push_back({state.elbow + (kClearance + 0.06) * normal, 0.06});
  spheres.push_back({0.5 * (state.elbow + state.wrist) - (kClearance + 0.05) * normal, 0.05});
  spheres.push_back({state.elbow + (kClearance + 0.05) * up, 0.05});
  return spheres;
}

Frame look_at(const Vector3& eye, const Vector3& target) {
  Frame f;
  const Vector3 z = (target - eye).normalized();
  Vector3 x = z.cross(Vector3::UnitZ());
  if (x.norm() < 1e-6) x = Vector3::UnitY().cross(z);  // looking straight up or down
  x.normalize();
  f.R.col(0) = x;
  f.R.col(1) = z.cross(x);
  f.R.col(2) = z;
  f.p = eye;
  return f;
}

std::vector<SceneCamera> scene_cameras(SceneKind scene, const Frame& base_T_tool0,
                                       const CameraParameters& wrist) {
  std::vector<SceneCamera> out;
  SceneCamera c;
  c.name = "wrist";
  c.mount = "gripper";
  c.pose = base_T_tool0 * wrist.tool_T_camera;
  c.field_of_view = wrist.field_of_view;
  c.width = wrist.width;
  c.height = wrist.height;
  out.push_back(c);
  const Vector3 tool = base_T_tool0.p;
  // The arm's middle: halfway from the shoulder's height above the base to the tool.
  const Vector3 middle = 0.5 * (Vector3(0.0, 0.0, 0.35) + tool);
  SceneCamera overview;
  overview.name = "overview";
  overview.pose = look_at(middle + Vector3(-0.3, -1.6, 0.7), middle);
  out.push_back(overview);
  if (scene == SceneKind::kDoor || scene == SceneKind::kVisualTarget) {
    const Frame eye = look_at(tool + Vector3(-0.8, -0.55, 0.35), tool + Vector3(0.1, 0.0, 0.0));
    for (const double side : {-1.0, 1.0}) {
      SceneCamera s;
      s.name = side < 0.0 ? "stereo_left" : "stereo_right";
      s.mount = "camera_mount";
      s.pose = eye;
      s.pose.p += side * 0.5 * kStereoBaseline * eye.R.col(0);
      s.stereo_partner = side < 0.0 ? "stereo_right" : "stereo_left";
      out.push_back(s);
    }
  }
  return out;
}

Frame door_hinge_in_tool(const DoorParameters& door, const GripperParameters& gripper) {
  Frame hinge;
  hinge.R.col(0) = -Vector3::UnitX();
  hinge.R.col(1) = Vector3::UnitY();
  hinge.R.col(2) = -Vector3::UnitZ();
  hinge.p = Vector3(0.0, -door.handle_to_hinge, gripper.grasp_depth + door.handle_standoff);
  return hinge;
}

Frame wall_in_tool(const WallParameters& wall, const GripperParameters& gripper) {
  Frame surface;
  surface.R = Vector3(1.0, -1.0, -1.0).asDiagonal();
  surface.p = Vector3(0.0, 0.0, gripper.length + wall.clearance);
  return surface;
}

Frame proximity_target_in_sensor(const ProximityTargetParameters& target) {
  Frame plate;
  plate.R = so3_exp(Vector3(target.tilt_x, 0.0, 0.0)) * so3_exp(Vector3(0.0, target.tilt_y, 0.0));
  plate.p = Vector3(0.0, 0.0, -target.distance);
  return plate;
}

}  // namespace tether::remote
