#include "mjcf_builder.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <locale>
#include <sstream>
#include <stdexcept>

namespace tether::remote::detail {

namespace {

// Mass properties below these are raised to them: MuJoCo refuses massless moving bodies,
// and URDFs often leave flange-like links empty.
constexpr double kMinMass = 1e-3;     // [kg]
constexpr double kMinInertia = 1e-6;  // [kg·m²]

// Stiff contact and weld: time constant 2 ms (≥ 2 timesteps at the default 0.5 ms),
// critically damped.
constexpr const char* kStiffSolref = "0.002 1";
constexpr const char* kStiffSolimp = "0.95 0.99 0.001";

class Writer {
 public:
  Writer() {
    out_.imbue(std::locale::classic());
    out_.precision(17);
  }
  std::ostringstream& out() { return out_; }
  std::string str() const { return out_.str(); }

  void vec(const Vector3& v) { out_ << v.x() << ' ' << v.y() << ' ' << v.z(); }
  // MuJoCo quaternions are (w, x, y, z).
  void quat(const Matrix3& R) {
    Eigen::Quaterniond q(R);
    q.normalize();
    out_ << q.w() << ' ' << q.x() << ' ' << q.y() << ' ' << q.z();
  }
  void pose(const Frame& f) {
    out_ << " pos=\"";
    vec(f.p);
    out_ << "\" quat=\"";
    quat(f.R);
    out_ << '"';
  }

 private:
  std::ostringstream out_;
};

void check_finite(const Frame& f, const char* what) {
  if (!f.R.allFinite() || !f.p.allFinite()) {
    throw std::invalid_argument(std::string("build_mjcf: ") + what + " is not finite");
  }
}

// <inertial> of a body whose mass properties are given about `com` in body axes; guards
// zero or tiny values (URDF links without <inertial>) and non-physical tensors.
void inertial(Writer& w, double mass, const Vector3& com, const Matrix3& inertia,
              const std::string& what) {
  if (!std::isfinite(mass) || !com.allFinite() || !inertia.allFinite()) {
    throw std::invalid_argument("build_mjcf: mass properties of " + what + " are not finite");
  }
  const double m = std::max(mass, kMinMass);
  Matrix3 I = 0.5 * (inertia + inertia.transpose());
  // Floors the principal moments so MuJoCo's positive-definiteness and triangle-inequality
  // checks pass (balanceinertia repairs what remains).
  const Eigen::SelfAdjointEigenSolver<Matrix3> eig(I);
  const Vector3 moments = eig.eigenvalues().cwiseMax(kMinInertia);
  I = eig.eigenvectors() * moments.asDiagonal() * eig.eigenvectors().transpose();
  w.out() << "<inertial pos=\"";
  w.vec(com);
  w.out() << "\" mass=\"" << m << "\" fullinertia=\"" << I(0, 0) << ' ' << I(1, 1) << ' ' << I(2, 2)
          << ' ' << I(0, 1) << ' ' << I(0, 2) << ' ' << I(1, 2) << "\"/>\n";
}

// A capsule between two points of a body, or a sphere where they (nearly) coincide.
void link_geom(Writer& w, const std::string& name, const Vector3& from, const Vector3& to,
               double radius) {
  w.out() << "<geom name=\"" << name << "\" class=\"arm\"";
  if ((to - from).norm() < 0.01) {
    w.out() << " type=\"sphere\" size=\"" << radius << "\" pos=\"";
    w.vec(0.5 * (from + to));
    w.out() << "\"/>\n";
    return;
  }
  w.out() << " type=\"capsule\" size=\"" << radius << "\" fromto=\"";
  w.vec(from);
  w.out() << ' ';
  w.vec(to);
  w.out() << "\"/>\n";
}

void camera(Writer& w, const MjcfCamera& c);

void gripper_body(Writer& w, const ArmModel& arm, const MjcfScene& s) {
  const GripperParameters& g = s.gripper;
  if (!(g.mass > 0.0) || !(g.radius > 0.0) || !(g.length > 2.0 * g.radius) ||
      !(g.grasp_depth > 0.0) || !g.center_of_mass.allFinite()) {
    throw std::invalid_argument(
        "build_mjcf: gripper needs mass > 0, radius > 0, length > 2·radius, grasp_depth > 0");
  }
  w.out() << "<body name=\"gripper\"";
  w.pose(arm.tool);
  w.out() << ">\n";
  // Solid cylinder along TOOL z, about its centre of mass.
  const double r2 = g.radius * g.radius;
  const double l2 = g.length * g.length;
  const Vector3 moments(g.mass * (3.0 * r2 + l2) / 12.0, g.mass * (3.0 * r2 + l2) / 12.0,
                        0.5 * g.mass * r2);
  inertial(w, g.mass, g.center_of_mass, moments.asDiagonal(), "the gripper");
  const WristComplianceParameters& c = s.wrist;
  if (c.enabled) {  // checked by SimulatedArm (check_options)
    // Six joints at the TOOL origin: the gripper's deflection from TOOL. The small armature
    // (the sensor's tool plate) keeps the torsion mode of a light gripper slow against the
    // physics step.
    const char* axes[3] = {"1 0 0", "0 1 0", "0 0 1"};
    const char* names[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; ++k) {
      w.out() << "<joint name=\"wrist_" << names[k] << "\" type=\"slide\" pos=\"0 0 0\" axis=\""
              << axes[k] << "\" stiffness=\"" << c.translational_stiffness << "\" damping=\""
              << c.translational_damping << "\" armature=\"0.01\"/>\n";
    }
    for (int k = 0; k < 3; ++k) {
      w.out() << "<joint name=\"wrist_r" << names[k] << "\" type=\"hinge\" pos=\"0 0 0\" axis=\""
              << axes[k] << "\" stiffness=\"" << c.rotational_stiffness << "\" damping=\""
              << c.rotational_damping << "\" armature=\"0.0005\"/>\n";
    }
  }
  // Sites are frames, not things a camera sees: group 4 is not drawn (the proximity sensor's
  // frame sits on the wrist camera's optical axis).
  w.out()
      << "<site name=\"ft_sensor\" pos=\"0 0 0\" quat=\"1 0 0 0\" size=\"0.01\" group=\"4\"/>\n";
  w.out() << "<site name=\"proximity\"";
  w.pose(s.tool_T_sensor);
  w.out() << " size=\"0.005\" group=\"4\"/>\n";
  link_geom(w, "gripper_body", Vector3(0.0, 0.0, g.radius), Vector3(0.0, 0.0, g.length - g.radius),
            g.radius);
  for (const MjcfCamera& c : s.gripper_cameras) camera(w, c);
  w.out() << "</body>\n";
}

// A camera whose frame C (z out of the lens, x right, y down in the image) is `c.pose` in its
// body; MuJoCo's cameras look along their −z with y up, so its frame is C turned about x.
void camera(Writer& w, const MjcfCamera& c) {
  const std::string& name = c.name;
  Frame mj = c.pose;
  mj.R.col(1) = -c.pose.R.col(1);
  mj.R.col(2) = -c.pose.R.col(2);
  const double fovy = 2.0 * std::atan(std::tan(0.5 * c.fov_x) * c.height / c.width);
  w.out() << "<camera name=\"" << name << "\" mode=\"fixed\"";
  w.pose(mj);
  w.out() << " fovy=\"" << fovy * 180.0 / 3.14159265358979323846 << "\"/>\n";
}

// The visual target: a tag36h11 AprilTag on a thin white board, carried by a mocap body the
// simulated arm moves along the target's path. The tag's face is a plane geom (one-sided, its
// +z towards the camera) whose texture the simulated arm fills with the tag's cells after
// compiling; the plane spans the tag with its white margin, 10/8 of the black square.
void visual_target(Writer& w, const MjcfScene& s) {
  const double half = 0.5 * s.tag_size * 10.0 / 8.0;
  w.out() << "<body name=\"visual_target\" mocap=\"true\"";
  w.pose(s.base_T_target);
  w.out() << ">\n<geom name=\"visual_target_tag\" class=\"scene_visual\" type=\"plane\" size=\""
          << half << ' ' << half << " 0.01\" material=\"tag\"/>\n"
          << "<geom name=\"visual_target_board\" class=\"scene_visual\" type=\"box\" size=\""
          << 1.3 * half << ' ' << 1.3 * half
          << " 0.004\" pos=\"0 0 -0.0045\" rgba=\"0.95 0.95 0.95 "
             "1\"/>\n</body>\n";
}

// The door frame's parts in the DOOR frame (door() below): 6 cm square posts beside the
// hinge and beyond the free edge (1 cm gaps), a lintel over the panel.
struct DoorFramePart {
  const char* name;
  Vector3 centre;
  Vector3 half_size;
};
std::array<DoorFramePart, 3> door_frame(const DoorParameters& d) {
  constexpr double kHalf = 0.03;                    // [m] half the posts' and lintel's section
  constexpr double kGap = 0.01;                     // [m]
  const double top = -0.05 + 0.5 * d.panel_height;  // the panel's top edge (z)
  const double half_height = 0.5 * d.panel_height + kGap + kHalf;
  return {
      {{"door_frame_hinge_side", Vector3(0.0, -kGap - kHalf, -0.05 + kGap + kHalf),
        Vector3(kHalf, kHalf, half_height + kHalf)},
       {"door_frame_latch_side", Vector3(0.0, d.panel_width + kGap + kHalf, -0.05 + kGap + kHalf),
        Vector3(kHalf, kHalf, half_height + kHalf)},
       {"door_frame_top", Vector3(0.0, 0.5 * d.panel_width, top + kGap + kHalf),
        Vector3(kHalf, 0.5 * d.panel_width + 2.0 * kGap + 2.0 * kHalf, kHalf)}}};
}

void door(Writer& w, const MjcfScene& s) {
  const DoorParameters& d = s.door;
  if (!(d.handle_to_hinge > 0.0) || !(d.panel_width > d.handle_to_hinge) ||
      !(d.panel_height > 0.1) || !(d.panel_thickness > 0.0) ||
      !(d.handle_standoff > 0.5 * d.panel_thickness) || !(d.mass > 0.0) ||
      !(d.hinge_damping >= 0.0) || !(d.hinge_friction >= 0.0) ||
      !(d.lower_limit < 0.0 && d.upper_limit > 0.0)) {
    throw std::invalid_argument(
        "build_mjcf: door needs panel_width > handle_to_hinge > 0, handle_standoff > "
        "panel_thickness/2, mass > 0, damping and friction ≥ 0, lower < 0 < upper limit");
  }
  check_finite(s.base_T_hinge, "the door hinge pose");
  // DOOR body frame: origin on the hinge axis at handle height, z the hinge axis (HINGE X),
  // y from the hinge towards the handle (HINGE Y), x = y × z (into the doorway).
  Frame base_T_door;
  base_T_door.p = s.base_T_hinge.p;
  base_T_door.R.col(0) = -s.base_T_hinge.R.col(2);
  base_T_door.R.col(1) = s.base_T_hinge.R.col(1);
  base_T_door.R.col(2) = s.base_T_hinge.R.col(0);
  const double t = d.panel_thickness;
  const Vector3 centre(0.0, 0.5 * d.panel_width, -0.05);
  const Vector3 moments(
      d.mass * (d.panel_width * d.panel_width + d.panel_height * d.panel_height) / 12.0,
      d.mass * (t * t + d.panel_height * d.panel_height) / 12.0,
      d.mass * (t * t + d.panel_width * d.panel_width) / 12.0);
  // The door's frame (two posts and a lintel around the closed panel), seen by the cameras,
  // never touched: the panel swings clear of it.
  for (const DoorFramePart& part : door_frame(d)) {
    w.out() << "<geom name=\"" << part.name
            << "\" class=\"scene_visual\" type=\"box\" rgba=\"0.45 0.45 0.48 1\" size=\"";
    w.vec(part.half_size);
    Frame pose = base_T_door;
    pose.p = base_T_door * part.centre;
    w.out() << '"';
    w.pose(pose);
    w.out() << "/>\n";
  }
  w.out() << "<body name=\"door\"";
  w.pose(base_T_door);
  w.out() << ">\n";
  inertial(w, d.mass, centre, moments.asDiagonal(), "the door");
  w.out() << "<joint name=\"door_hinge\" type=\"hinge\" pos=\"0 0 0\" axis=\"0 0 1\" "
             "limited=\"true\" range=\""
          << d.lower_limit << ' ' << d.upper_limit << "\" solreflimit=\"" << kStiffSolref
          << "\" solimplimit=\"" << kStiffSolimp << "\" damping=\"" << d.hinge_damping
          << "\" frictionloss=\"" << d.hinge_friction << "\"/>\n";
  w.out() << "<geom name=\"door_panel\" class=\"scene_visual\" type=\"box\" pos=\"";
  w.vec(centre);
  w.out() << "\" size=\"" << 0.5 * t << ' ' << 0.5 * d.panel_width << ' ' << 0.5 * d.panel_height
          << "\" rgba=\"0.6 0.45 0.3 1\"/>\n";
  const double s_ = d.handle_standoff;
  const double y = d.handle_to_hinge;
  w.out() << "<geom name=\"door_handle_bar\" class=\"scene_visual\" type=\"capsule\" size=\"0.01\" "
             "fromto=\""
          << -0.5 * t << ' ' << y << " 0.05 " << -s_ << ' ' << y << " 0.05\"/>\n";
  w.out() << "<geom name=\"door_handle_grip\" class=\"scene_visual\" type=\"capsule\" "
             "size=\"0.012\" fromto=\""
          << -s_ << ' ' << y << " -0.06 " << -s_ << ' ' << y << " 0.06\"/>\n";
  w.out() << "</body>\n";
}

void wall(Writer& w, const MjcfScene& s) {
  check_finite(s.base_T_wall, "the wall pose");
  constexpr double kHalfThickness = 0.025;
  Frame box = s.base_T_wall;
  box.p -= kHalfThickness * s.base_T_wall.R.col(2);
  w.out() << "<geom name=\"wall\" class=\"scene_contact\" type=\"box\" size=\"0.5 0.5 "
          << kHalfThickness << "\"";
  w.pose(box);
  w.out() << " rgba=\"0.7 0.7 0.75 1\"/>\n";
}

void obstacles(Writer& w, const MjcfScene& s) {
  int index = 0;
  for (const Sphere& sphere : s.spheres) {
    if (!sphere.center.allFinite() || !(sphere.radius > 0.0)) {
      throw std::invalid_argument("build_mjcf: obstacle sphere " + std::to_string(index) +
                                  " needs a finite centre and a radius > 0");
    }
    w.out() << "<geom name=\"obstacle_" << index++
            << "\" class=\"scene_contact\" type=\"sphere\" size=\"" << sphere.radius << "\" pos=\"";
    w.vec(sphere.center);
    w.out() << "\" rgba=\"0.8 0.3 0.3 1\"/>\n";
  }
}

void plate(Writer& w, const MjcfScene& s) {
  check_finite(s.base_T_plate, "the proximity target pose");
  if (!(s.target.size > 0.0) || !(s.target.distance > 0.0)) {
    throw std::invalid_argument("build_mjcf: proximity target needs size > 0 and distance > 0");
  }
  constexpr double kHalfThickness = 0.0025;
  Frame box = s.base_T_plate;
  box.p -= kHalfThickness * s.base_T_plate.R.col(2);
  w.out() << "<geom name=\"proximity_target\" class=\"scene_visual\" type=\"box\" size=\""
          << 0.5 * s.target.size << ' ' << 0.5 * s.target.size << ' ' << kHalfThickness << "\"";
  w.pose(box);
  w.out() << " rgba=\"0.3 0.5 0.8 1\"/>\n";
}

}  // namespace

JointVector rotor_inertia(const ArmModel& arm) {
  JointVector out = JointVector::Zero();
  for (int i = 0; i < std::min(arm.dof(), kArmDof); ++i) {
    out[i] = std::clamp(arm.joints[static_cast<std::size_t>(i)].limits.effort / 400.0, 0.02, 0.5);
  }
  return out;
}

JointVector joint_damping(const ArmModel& arm) {
  JointVector out = JointVector::Zero();
  for (int i = 0; i < std::min(arm.dof(), kArmDof); ++i) {
    out[i] = arm.joints[static_cast<std::size_t>(i)].limits.effort / 100.0;
  }
  return out;
}

double link_radius(int joint) { return joint < 4 ? 0.06 : (joint < 6 ? 0.05 : 0.04); }

std::string build_mjcf(const ArmModel& arm, const MjcfScene& s) {
  if (arm.dof() != kArmDof) {
    throw std::invalid_argument("build_mjcf: arm '" + arm.name + "' (" + arm.source + ") has " +
                                std::to_string(arm.dof()) + " joints; the simulated arm needs " +
                                std::to_string(kArmDof));
  }
  if (!(s.timestep > 0.0) || !(s.timestep <= 0.01)) {
    throw std::invalid_argument("build_mjcf: timestep must be in (0, 0.01] s");
  }
  check_finite(arm.tool, "the arm's tool frame");
  check_finite(s.base_T_tool, "the initial tool pose");
  check_finite(s.tool_T_sensor, "the proximity sensor frame");

  const JointVector armature = rotor_inertia(arm);
  const JointVector damping = joint_damping(arm);
  Writer w;
  auto& o = w.out();
  std::string model_name = "tether_";
  for (const char c : arm.name) model_name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  o << "<mujoco model=\"" << model_name << "\">\n";
  o << "<compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"true\"/>\n";
  // Implicit integration treats the servos' velocity feedback (actuator bias on q̇) and the
  // joint damping implicitly, which keeps stiff servos stable at a 0.5 ms step.
  o << "<option timestep=\"" << s.timestep
    << "\" integrator=\"implicit\" gravity=\"0 0 -9.81\" solver=\"Newton\" iterations=\"50\" "
       "tolerance=\"1e-10\" cone=\"pyramidal\"/>\n";
  o << "<size njmax=\"300\" nconmax=\"60\"/>\n";
  o << "<default>\n"
       "<geom contype=\"0\" conaffinity=\"0\" group=\"0\" solref=\""
    << kStiffSolref << "\" solimp=\"" << kStiffSolimp
    << "\"/>\n"
       "<default class=\"arm\"><geom contype=\"1\" conaffinity=\"0\" group=\"1\" "
       "rgba=\"0.9 0.5 0.1 1\"/></default>\n"
       "<default class=\"scene_contact\"><geom contype=\"0\" conaffinity=\"1\" "
       "group=\"0\"/></default>\n"
       "<default class=\"scene_visual\"><geom contype=\"0\" conaffinity=\"0\" "
       "group=\"0\"/></default>\n"
       "</default>\n";
  // What the cameras see with: MuJoCo's head light, one light above the arm, no shadows or
  // reflections (the renderer turns them off), an off-screen buffer for the largest image.
  o << "<visual><global offwidth=\"" << std::max(s.offscreen_width, 64) << "\" offheight=\""
    << std::max(s.offscreen_height, 64)
    << "\"/><quality shadowsize=\"0\" offsamples=\"0\"/><headlight ambient=\"0.35 0.35 0.35\" "
       "diffuse=\"0.5 0.5 "
       "0.5\"/></visual>\n";
  // The floor's tiles (0.5 m), and the visual target's tag (its cells written after compiling).
  o << "<asset><texture name=\"floor\" type=\"2d\" builtin=\"checker\" width=\"64\" "
       "height=\"64\" rgb1=\"0.32 0.34 0.36\" rgb2=\"0.26 0.28 0.30\"/><material name=\"floor\" "
       "texture=\"floor\" texrepeat=\"6 6\"/>";
  if (s.kind == SceneKind::kVisualTarget) {
    o << "<texture name=\"tag\" type=\"2d\" builtin=\"flat\" width=\"" << kTagTexturePixels
      << "\" height=\"" << kTagTexturePixels
      << "\" rgb1=\"1 1 1\"/><material name=\"tag\" texture=\"tag\" texrepeat=\"1 1\" "
         "emission=\"0.3\"/>";
  }
  o << "</asset>\n";
  o << "<worldbody>\n";
  o << "<light name=\"overhead\" pos=\"0 0 3\" dir=\"0 0 -1\" directional=\"true\" "
       "castshadow=\"false\" diffuse=\"0.5 0.5 0.5\"/>\n";
  // The floor the arm stands on, for the cameras only: group 2 (the proximity beams see
  // group 0), no contacts.
  o << "<geom name=\"floor\" type=\"plane\" size=\"3 3 0.1\" material=\"floor\" group=\"2\" "
       "contype=\"0\" conaffinity=\"0\"/>\n";
  // The base link: visual only (it is not a moving body).
  {
    const Vector3 first = arm.joints[0].origin.p;
    w.out() << "<geom name=\"arm_base\" class=\"arm\" contype=\"0\" type=\"";
    if (first.norm() < 0.01) {
      w.out() << "sphere\" size=\"0.07\"/>\n";
    } else {
      w.out() << "capsule\" size=\"0.07\" fromto=\"0 0 0 ";
      w.vec(first);
      w.out() << "\"/>\n";
    }
  }
  for (int i = 0; i < kArmDof; ++i) {
    const ArmJoint& joint = arm.joints[static_cast<std::size_t>(i)];
    check_finite(joint.origin, ("the origin of joint " + joint.name).c_str());
    if (!joint.axis.allFinite() || std::abs(joint.axis.norm() - 1.0) > 1e-6) {
      throw std::invalid_argument("build_mjcf: joint " + joint.name + " has no unit axis");
    }
    const JointLimits& lim = joint.limits;
    if (!(lim.lower < lim.upper) || !std::isfinite(lim.lower) || !std::isfinite(lim.upper) ||
        !(lim.effort > 0.0) || !std::isfinite(lim.effort)) {
      throw std::invalid_argument("build_mjcf: joint " + joint.name +
                                  " needs finite limits lower < upper and effort > 0");
    }
    o << "<body name=\"arm_link_" << i << "\"";
    w.pose(joint.origin);
    o << ">\n";
    inertial(w, joint.link.mass, joint.link.com, joint.link.inertia, "link " + joint.child_link);
    o << "<joint name=\"arm_joint_" << i << "\" type=\"hinge\" pos=\"0 0 0\" axis=\"";
    w.vec(joint.axis);
    o << "\" limited=\"true\" range=\"" << lim.lower << ' ' << lim.upper << "\" armature=\""
      << armature[i] << "\" damping=\"" << damping[i] << "\"/>\n";
    const Vector3 next =
        i + 1 < kArmDof ? arm.joints[static_cast<std::size_t>(i) + 1].origin.p : arm.tool.p;
    link_geom(w, "arm_link_" + std::to_string(i), Vector3::Zero(), next, link_radius(i));
  }
  gripper_body(w, arm, s);
  for (int i = 0; i < kArmDof; ++i) o << "</body>\n";

  switch (s.kind) {
    case SceneKind::kFreeSpace:
      break;
    case SceneKind::kDoor:
      door(w, s);
      break;
    case SceneKind::kWall:
      wall(w, s);
      obstacles(w, s);  // the sphere beside the elbow, if any
      break;
    case SceneKind::kObstacles:
      obstacles(w, s);
      break;
    case SceneKind::kProximityTarget:
      plate(w, s);
      break;
    case SceneKind::kVisualTarget:
      visual_target(w, s);
      break;
  }
  for (const MjcfCamera& c : s.world_cameras) camera(w, c);
  if (!s.mount_cameras.empty()) {
    o << "<body name=\"camera_mount\" mocap=\"true\"";
    w.pose(s.base_T_camera_mount);
    o << ">\n";
    for (const MjcfCamera& c : s.mount_cameras) camera(w, c);
    o << "</body>\n";
  }
  o << "</worldbody>\n";

  if (s.kind == SceneKind::kDoor) {
    // The gripper holds the handle rigidly: relpose is the door body's pose in the gripper
    // frame at the initial configuration, so the weld starts satisfied.
    Frame base_T_door;
    base_T_door.p = s.base_T_hinge.p;
    base_T_door.R.col(0) = -s.base_T_hinge.R.col(2);
    base_T_door.R.col(1) = s.base_T_hinge.R.col(1);
    base_T_door.R.col(2) = s.base_T_hinge.R.col(0);
    const Frame gripper_T_door = s.base_T_tool.inverse() * base_T_door;
    o << "<equality><weld name=\"grasp\" body1=\"gripper\" body2=\"door\" solref=\"" << kStiffSolref
      << "\" solimp=\"" << kStiffSolimp << "\" relpose=\"";
    w.vec(gripper_T_door.p);
    o << ' ';
    w.quat(gripper_T_door.R);
    o << "\"/></equality>\n";
  }

  o << "<actuator>\n";
  for (int i = 0; i < kArmDof; ++i) {
    const double effort = arm.joints[static_cast<std::size_t>(i)].limits.effort;
    o << "<general name=\"arm_servo_" << i << "\" joint=\"arm_joint_" << i
      << "\" gaintype=\"fixed\" biastype=\"affine\" gainprm=\"1\" biasprm=\"0 -1 0\" "
         "ctrllimited=\"false\" forcelimited=\"true\" forcerange=\""
      << -effort << ' ' << effort << "\"/>\n";
  }
  o << "</actuator>\n";
  o << "<sensor><force name=\"ft_force\" site=\"ft_sensor\"/>"
       "<torque name=\"ft_torque\" site=\"ft_sensor\"/></sensor>\n";
  o << "</mujoco>\n";
  return w.str();
}

SceneDescription describe_scene(const MjcfScene& s, const std::string& name) {
  SceneDescription out;
  out.name = name;
  const auto body = [&out](std::string body_name, SceneBody::Shape shape, const Vector3& size,
                           const Frame& pose) -> SceneBody& {
    SceneBody b;
    b.name = std::move(body_name);
    b.shape = shape;
    b.size = size;
    b.pose = pose;
    out.bodies.push_back(std::move(b));
    return out.bodies.back();
  };
  switch (s.kind) {
    case SceneKind::kFreeSpace:
    case SceneKind::kVisualTarget:
      break;
    case SceneKind::kDoor: {
      const DoorParameters& d = s.door;
      // The DOOR body frame as door() writes it: z the hinge axis, y towards the handle.
      Frame base_T_door;
      base_T_door.p = s.base_T_hinge.p;
      base_T_door.R.col(0) = -s.base_T_hinge.R.col(2);
      base_T_door.R.col(1) = s.base_T_hinge.R.col(1);
      base_T_door.R.col(2) = s.base_T_hinge.R.col(0);
      Frame panel = base_T_door;
      panel.p = base_T_door * Vector3(0.0, 0.5 * d.panel_width, -0.05);
      body("door_panel", SceneBody::Shape::kBox,
           Vector3(0.5 * d.panel_thickness, 0.5 * d.panel_width, 0.5 * d.panel_height), panel)
          .joint = "door_hinge";
      Frame grip = base_T_door;
      // The grip door() writes runs ±0.06 m along the hinge about the grasp point's height.
      grip.p = base_T_door * Vector3(-d.handle_standoff, d.handle_to_hinge, 0.0);
      body("door_handle", SceneBody::Shape::kCylinder, Vector3(0.012, 0.012, 0.06), grip).joint =
          "door_hinge";
      for (const DoorFramePart& part : door_frame(d)) {
        Frame pose = base_T_door;
        pose.p = base_T_door * part.centre;
        body(part.name, SceneBody::Shape::kBox, part.half_size, pose);
      }
      SceneJoint hinge;
      hinge.name = "door_hinge";
      hinge.position = base_T_door.p;
      hinge.axis = base_T_door.R.col(2);
      hinge.lower = d.lower_limit;
      hinge.upper = d.upper_limit;
      hinge.aux_index = 0;  // simulated_arm.h: aux[0] is the hinge angle
      out.joints.push_back(hinge);
      break;
    }
    case SceneKind::kWall:
    case SceneKind::kObstacles:
      if (s.kind == SceneKind::kWall) {
        constexpr double kHalfThickness = 0.025;  // as wall() writes it
        Frame box = s.base_T_wall;
        box.p -= kHalfThickness * s.base_T_wall.R.col(2);
        body("wall", SceneBody::Shape::kBox, Vector3(0.5, 0.5, kHalfThickness), box).contact = true;
      }
      for (std::size_t i = 0; i < s.spheres.size(); ++i) {
        Frame centre;
        centre.p = s.spheres[i].center;
        SceneBody& b = body("obstacle_" + std::to_string(i), SceneBody::Shape::kSphere,
                            Vector3(s.spheres[i].radius, 0.0, 0.0), centre);
        b.obstacle = true;
        b.contact = true;
      }
      break;
    case SceneKind::kProximityTarget: {
      constexpr double kHalfThickness = 0.0025;  // as plate() writes it
      Frame box = s.base_T_plate;
      box.p -= kHalfThickness * s.base_T_plate.R.col(2);
      body("proximity_target", SceneBody::Shape::kBox,
           Vector3(0.5 * s.target.size, 0.5 * s.target.size, kHalfThickness), box);
      break;
    }
  }
  return out;
}

}  // namespace tether::remote::detail
