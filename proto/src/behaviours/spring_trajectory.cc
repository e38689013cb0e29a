// The spring trajectory behaviour's section of a task: tether.v1.SpringTrajectoryParameters
// (tether/v1/behaviours/spring_trajectory.proto) <-> tether::SpringTrajectoryParameters.

#include <string>

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/spring_trajectory.pb.h"

namespace tether::proto {

using detail::finite;
using detail::limit;
using detail::write_frame_if_not_identity;

void read_parameters(const v1::SpringTrajectoryParameters& m, SpringTrajectoryParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_relative()) p.relative = m.relative();
  if (m.has_destination()) {
    p.destination = to_frame(m.destination(), "spring_trajectory.destination");
  }
  p.arm_angle = finite(m.arm_angle_rad(), "spring_trajectory.arm_angle_rad");
  if (m.has_max_translation()) {
    // AxisLimits: an absent component is unbounded.
    const v1::AxisLimits& l = m.max_translation();
    const std::string path = "spring_trajectory.max_translation";
    p.max_translation = Vector3(l.has_x() ? limit(l.x(), path + ".x") : kUnbounded,
                                l.has_y() ? limit(l.y(), path + ".y") : kUnbounded,
                                l.has_z() ? limit(l.z(), path + ".z") : kUnbounded);
  }
  if (m.has_max_rotation_rad()) {
    p.max_rotation = limit(m.max_rotation_rad(), "spring_trajectory.max_rotation_rad");
  }
  if (m.has_max_arm_angle_rad()) {
    p.max_arm_angle = limit(m.max_arm_angle_rad(), "spring_trajectory.max_arm_angle_rad");
  }
}

void write_parameters(const SpringTrajectoryParameters& p, v1::TaskParameters& out) {
  const SpringTrajectoryParameters d;
  const auto m = [&out] { return out.mutable_spring_trajectory(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.relative != d.relative) m()->set_relative(p.relative);
  write_frame_if_not_identity(p.destination, [&m] { return m()->mutable_destination(); });
  if (p.arm_angle != d.arm_angle) m()->set_arm_angle_rad(p.arm_angle);
  if (p.max_translation != d.max_translation) {
    // Only bounded components: an absent one reads back as unbounded.
    v1::AxisLimits* limits = m()->mutable_max_translation();
    if (p.max_translation.x() != kUnbounded) limits->set_x(p.max_translation.x());
    if (p.max_translation.y() != kUnbounded) limits->set_y(p.max_translation.y());
    if (p.max_translation.z() != kUnbounded) limits->set_z(p.max_translation.z());
  }
  if (p.max_rotation != d.max_rotation) m()->set_max_rotation_rad(p.max_rotation);
  if (p.max_arm_angle != d.max_arm_angle) m()->set_max_arm_angle_rad(p.max_arm_angle);
}

}  // namespace tether::proto
