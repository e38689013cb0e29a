// The obstacle avoidance behaviour's section of a task: tether.v1.ObstacleAvoidanceParameters
// (tether/v1/behaviours/obstacle_avoidance.proto) <-> tether::ObstacleAvoidanceParameters.

#include <string>

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/obstacle_avoidance.pb.h"

namespace tether::proto {

using detail::finite;

void read_parameters(const v1::ObstacleAvoidanceParameters& m, ObstacleAvoidanceParameters& p) {
  p = {};
  p.enabled = m.enabled();
  for (int k = 0; k < m.obstacles_size(); ++k) {
    const std::string path = FieldPath("obstacle_avoidance.obstacles").element(k).to_string();
    const v1::SphereObstacle& o = m.obstacles(k);
    ObstacleSphereParameters sphere;
    sphere.centre = to_vector3(o.centre(), path + ".centre");
    sphere.radius = finite(o.radius_m(), path + ".radius_m");
    if (o.has_influence_m()) sphere.influence = finite(o.influence_m(), path + ".influence_m");
    p.obstacles.push_back(sphere);
  }
  if (m.has_link_radius()) {
    p.link_radius = to_joint_vector(m.link_radius(), "obstacle_avoidance.link_radius");
  }
  if (m.has_constrain_resolver()) p.constrain_resolver = m.constrain_resolver();
  if (m.has_recovery()) p.recovery = finite(m.recovery(), "obstacle_avoidance.recovery");
  p.behaviour_gain = finite(m.behaviour_gain(), "obstacle_avoidance.behaviour_gain");
}

void write_parameters(const ObstacleAvoidanceParameters& p, v1::TaskParameters& out) {
  const ObstacleAvoidanceParameters d;
  const auto m = [&out] { return out.mutable_obstacle_avoidance(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  for (const ObstacleSphereParameters& sphere : p.obstacles) {
    v1::SphereObstacle* o = m()->add_obstacles();
    from_vector3(sphere.centre, o->mutable_centre());
    if (sphere.radius != 0.0) o->set_radius_m(sphere.radius);
    if (sphere.influence != ObstacleSphereParameters{}.influence) {
      o->set_influence_m(sphere.influence);
    }
  }
  if (p.link_radius != d.link_radius) from_joint_vector(p.link_radius, m()->mutable_link_radius());
  if (p.constrain_resolver != d.constrain_resolver) {
    m()->set_constrain_resolver(p.constrain_resolver);
  }
  if (p.recovery != d.recovery) m()->set_recovery(p.recovery);
  if (p.behaviour_gain != d.behaviour_gain) m()->set_behaviour_gain(p.behaviour_gain);
}

}  // namespace tether::proto
