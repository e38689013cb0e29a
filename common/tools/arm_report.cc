#include "arm_report.h"

#include <Eigen/SVD>
#include <cmath>
#include <iomanip>

#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"
#include "tether/common/units.h"

namespace tether::tools {
namespace {

const char* status_text(ArmAngleStatus status) {
  switch (status) {
    case ArmAngleStatus::kOk:
      return "ok";
    case ArmAngleStatus::kElbowOnShoulderWristLine:
      return "undefined: elbow on the shoulder-wrist line";
    case ArmAngleStatus::kReferenceAlongShoulderWrist:
      return "undefined: shoulder-wrist line along the reference";
  }
  return "?";
}

}  // namespace

std::vector<JointVector> demo_configurations(const ArmModel& arm) {
  const KinematicModel model(arm);
  const JointVector mid = 0.5 * (model.lower_limits() + model.upper_limits());
  const JointVector half = 0.5 * (model.upper_limits() - model.lower_limits());
  std::vector<JointVector> out;
  // Fractions of each joint's half range around its mid point, chosen to bend the elbow
  // and tilt the shoulder so that every configuration has a defined arm angle.
  const double fractions[3][kArmDof] = {{0.0, 0.25, 0.0, -0.5, 0.0, 0.4, 0.0},
                                        {0.3, 0.35, -0.2, -0.6, 0.3, -0.3, 0.5},
                                        {-0.4, -0.3, 0.5, 0.45, -0.5, 0.6, -0.3}};
  for (const auto& f : fractions) {
    JointVector q;
    for (int i = 0; i < kArmDof; ++i) q[i] = mid[i] + f[i] * half[i];
    out.push_back(q);
  }
  return out;
}

void print_arm_report(const ArmModel& arm, const std::vector<JointVector>& configurations,
                      const Vector3& reference_plane, std::ostream& out) {
  const KinematicModel model(arm);
  const ArmAngleModel arm_angle(reference_plane);
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  const Eigen::IOFormat row_format(5, 0, "  ", "\n", "    [", "]");

  out << std::fixed << std::setprecision(4);
  out << "arm '" << arm.name << "' from " << arm.source << "\n"
      << "  chain " << arm.base_link << " -> " << arm.tool_link << ", " << arm.dof()
      << " revolute joints\n";
  for (int i = 0; i < arm.dof(); ++i) {
    const auto& j = arm.joints[static_cast<std::size_t>(i)];
    out << "  " << std::setw(16) << std::left << j.name << std::right << " limits [" << std::setw(8)
        << j.limits.lower * kRadToDeg << ", " << std::setw(8) << j.limits.upper * kRadToDeg
        << "] deg, " << j.limits.velocity * kRadToDeg << " deg/s, " << j.limits.acceleration
        << " rad/s^2, link mass " << j.link.mass << " kg\n";
  }
  out << "  arm-angle reference plane vector V = (" << reference_plane.transpose() << ")\n";
  out << "  composite Jacobian rows: v_x v_y v_z (m/s) | w_x w_y w_z (rad/s) | psi_dot (rad/s), "
         "BASE frame, reference point = tool origin\n";

  int index = 0;
  for (const JointVector& q : configurations) {
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, arm_angle, Frame::Identity(), J, psi);
    const Eigen::JacobiSVD<CompositeJacobian> svd(J);
    const auto& sv = svd.singularValues();
    const Vector3 rotvec = so3_log(state.tool.R);

    out << "\nconfiguration " << ++index << "\n";
    out << "  q [deg]          = (" << (q * kRadToDeg).transpose() << ")\n";
    out << "  tool position [m] = (" << state.tool.p.transpose() << ")\n";
    out << "  tool rotation     = " << rotvec.norm() * kRadToDeg << " deg about ("
        << (rotvec.norm() > 0 ? Vector3(rotvec.normalized()) : Vector3::UnitZ()).transpose()
        << ")\n";
    out << "  shoulder S [m]    = (" << state.shoulder.transpose() << ")\n";
    out << "  elbow    E [m]    = (" << state.elbow.transpose() << ")\n";
    out << "  wrist    W [m]    = (" << state.wrist.transpose() << ")\n";
    out << "  arm angle psi     = " << psi.psi * kRadToDeg << " deg (" << status_text(psi.status)
        << ")\n";
    out << "  composite Jacobian J (7x7):\n" << J.format(row_format) << "\n";
    out << "  singular values   = (" << sv.transpose() << "), condition number "
        << sv(0) / sv(kArmDof - 1) << "\n";
  }
}

}  // namespace tether::tools
