// The trajectory behaviour's section of a task: tether.v1.TrajectoryParameters
// (tether/v1/behaviours/trajectory.proto) <-> tether::TrajectoryParameters.

#include <cstddef>
#include <string>

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/trajectory.pb.h"

namespace tether::proto {

using detail::finite;
using detail::write_frame_if_not_identity;

void read_parameters(const v1::TrajectoryParameters& m, TrajectoryParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_relative()) p.relative = m.relative();
  p.waypoints.reserve(static_cast<std::size_t>(m.waypoints_size()));
  for (int i = 0; i < m.waypoints_size(); ++i) {
    const v1::Waypoint& w = m.waypoints(i);
    const std::string path = FieldPath("trajectory.waypoints").element(i).to_string();
    Waypoint waypoint;
    waypoint.time = finite(w.time_s(), path + ".time_s");
    if (w.has_pose()) waypoint.pose = to_frame(w.pose(), path + ".pose");
    waypoint.arm_angle = finite(w.arm_angle_rad(), path + ".arm_angle_rad");
    p.waypoints.push_back(waypoint);
  }
}

void write_parameters(const TrajectoryParameters& p, v1::TaskParameters& out) {
  const TrajectoryParameters d;
  if (p.enabled != d.enabled) out.mutable_trajectory()->set_enabled(p.enabled);
  if (p.relative != d.relative) out.mutable_trajectory()->set_relative(p.relative);
  for (const Waypoint& w : p.waypoints) {
    v1::Waypoint* m = out.mutable_trajectory()->add_waypoints();
    m->set_time_s(w.time);
    write_frame_if_not_identity(w.pose, [m] { return m->mutable_pose(); });
    m->set_arm_angle_rad(w.arm_angle);
  }
}

}  // namespace tether::proto
