#include "tether/remote/sim/simulated_arm.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

#include "mjcf_builder.h"
#include "offscreen_renderer.h"
#include "rendered_camera.h"
#include "simulated_camera.h"
#include "tether/common/kinematics.h"
#include "tether/common/units.h"
#include "tether/remote/vision/tag_detector.h"
#include "video_rig.h"

namespace tether::remote {

namespace {

constexpr double kPi = 3.14159265358979323846;

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

ModelPtr compile(const std::string& xml, const ArmModel& arm, SceneKind scene) {
  // MuJoCo 2.2 loads XML from files only; its virtual file system serves the text from
  // memory. mjVFS holds fixed arrays of ~2 MB, so it lives on the heap.
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* name = "tether_simulated_arm.xml";
  if (mj_makeEmptyFileVFS(vfs.get(), name, static_cast<int>(xml.size())) != 0) {
    throw std::runtime_error("SimulatedArm: cannot create MuJoCo's in-memory file");
  }
  const int index = mj_findFileVFS(vfs.get(), name);
  std::memcpy(vfs->filedata[index], xml.data(), xml.size());
  char error[1024] = {0};
  mjModel* model = mj_loadXML(name, vfs.get(), error, sizeof(error));
  mj_deleteVFS(vfs.get());
  if (model == nullptr) {
    throw std::runtime_error("SimulatedArm: MuJoCo " + std::string(mj_versionString()) +
                             " could not compile the model of arm '" + arm.name + "' (" +
                             arm.source + ") in the " + to_string(scene) + " scene: " + error);
  }
  return ModelPtr(model);
}

int find(const mjModel* m, mjtObj type, const char* name) {
  const int id = mj_name2id(m, type, name);
  if (id < 0) {
    throw std::runtime_error(std::string("SimulatedArm: generated model lacks '") + name + "'");
  }
  return id;
}

void check_options(const ArmModel& arm, const SimulationOptions& o, const JointVector& q0) {
  if (!(o.timestep > 0.0) || !(o.timestep <= 0.002)) {
    throw std::invalid_argument("SimulatedArm: timestep must be in (0, 0.002] s, got " +
                                std::to_string(o.timestep));
  }
  if (!(o.servo.bandwidth > 0.0) || !(o.servo.damping_ratio > 0.0) ||
      !(2.0 * kPi * o.servo.bandwidth * o.timestep < 0.5)) {
    throw std::invalid_argument(
        "SimulatedArm: servo bandwidth and damping ratio must be > 0, and 2π·bandwidth·"
        "timestep < 0.5 (the servo must be slow against the physics step)");
  }
  if (!(o.proximity_sensor.range > 0.0) || !(o.proximity_sensor.beam_offset > 0.0) ||
      !o.proximity_sensor.tool_T_sensor.R.allFinite() ||
      !o.proximity_sensor.tool_T_sensor.p.allFinite()) {
    throw std::invalid_argument(
        "SimulatedArm: proximity sensor needs range > 0, beam_offset > 0, a finite frame");
  }
  if (o.wrist.enabled) {
    const auto check = [](const char* name, double value, bool positive) {
      if (!std::isfinite(value) || value < 0.0 || (positive && value == 0.0)) {
        throw std::invalid_argument(std::string("SimulatedArm: wrist compliance ") + name + " = " +
                                    std::to_string(value) + ": must be finite and " +
                                    (positive ? "> 0" : "≥ 0"));
      }
    };
    check("translational_stiffness [N/m]", o.wrist.translational_stiffness, true);
    check("rotational_stiffness [N·m/rad]", o.wrist.rotational_stiffness, true);
    check("translational_damping [N·s/m]", o.wrist.translational_damping, false);
    check("rotational_damping [N·m·s/rad]", o.wrist.rotational_damping, false);
  }
  if (o.scene == SceneKind::kVisualTarget) {
    const CameraParameters& c = o.camera;
    if (c.width < 16 || c.height < 16 || !(c.field_of_view > 0.0) || !(c.field_of_view < 3.0) ||
        !(c.frame_rate > 0.0) || !(c.frame_rate <= 1000.0) || !(c.pixel_noise >= 0.0) ||
        !(c.latency >= 0.0) || !(c.latency < 1.0) || !c.tool_T_camera.p.allFinite() ||
        !c.tool_T_camera.R.allFinite()) {
      throw std::invalid_argument(
          "SimulatedArm: camera needs width and height ≥ 16 px, a field of view in (0, 3) rad, "
          "a frame rate in (0, 1000] Hz, pixel noise ≥ 0, a latency in [0, 1) s and a finite "
          "frame");
    }
    if (c.width > 4096 || c.height > 4096) {
      throw std::invalid_argument("SimulatedArm: camera width " + std::to_string(c.width) +
                                  " × height " + std::to_string(c.height) +
                                  " px: each must be at most 4096 px");
    }
    const VisualTargetParameters& t = o.visual_target;
    if (t.tag_id < 0 || t.tag_id >= vision::kTag36h11Count) {
      throw std::invalid_argument(
          "SimulatedArm: visual_target.tag_id = " + std::to_string(t.tag_id) + ": must be in [0, " +
          std::to_string(vision::kTag36h11Count - 1) + "] (tag36h11)");
    }
    if (!(t.size > 0.0) || !(t.distance > 0.0) || !t.velocity.allFinite() ||
        !std::isfinite(t.start) || std::isnan(t.leave_at) || !(t.travel > 0.0)) {
      throw std::invalid_argument(
          "SimulatedArm: visual target needs size > 0, distance > 0, a finite velocity and "
          "start, and a travel > 0");
    }
  }
  if (!(o.wall.clearance >= 0.0)) {
    throw std::invalid_argument("SimulatedArm: wall clearance must be ≥ 0");
  }
  for (int i = 0; i < kArmDof; ++i) {
    const JointLimits& lim = arm.joints[static_cast<std::size_t>(i)].limits;
    if (!std::isfinite(q0[i]) || q0[i] < lim.lower || q0[i] > lim.upper) {
      throw std::invalid_argument("SimulatedArm: initial position of joint " +
                                  arm.joints[static_cast<std::size_t>(i)].name + " (" +
                                  std::to_string(q0[i]) + " rad) is outside its limits [" +
                                  std::to_string(lim.lower) + ", " + std::to_string(lim.upper) +
                                  "]");
    }
  }
}

}  // namespace

struct SimulatedArm::Impl {
  ArmModel arm;
  SimulationOptions options;
  JointVector q0;
  Frame base_T_tool0;
  std::vector<Sphere> spheres;
  std::string xml;
  SceneDescription description;
  ModelPtr m;
  DataPtr d;
  int force_adr = 0;
  int torque_adr = 0;
  int proximity_site = 0;
  int door_qpos = -1;
  int door_dof = -1;
  std::array<int, 6> wrist_qpos{-1, -1, -1, -1, -1, -1};  // wrist_x … wrist_rz, if enabled
  std::array<int, 6> wrist_dof{-1, -1, -1, -1, -1, -1};
  int gripper_body = -1;
  // Visual-target scene only: the target's path and the geometric camera (its oracle), and
  // the rendered camera unless CameraParameters::source is kGeometric.
  std::optional<detail::SimulatedCamera> camera;
  std::unique_ptr<detail::RenderedCamera> rendered;
  std::unique_ptr<detail::VideoRig> video;  // the watched cameras
  int target_mocap = -1;
  // The pan-tilt head (camera_device.h aim()): its mocap body, its initial frame, the aim
  // asked for (any thread) and where it is (the physics thread).
  int mount_mocap = -1;
  Frame base_T_mount0;
  std::atomic<double> pan_target{0.0};
  std::atomic<double> tilt_target{0.0};
  double pan = 0.0;
  double tilt = 0.0;
  JointVector kp = JointVector::Zero();
  JointVector kd = JointVector::Zero();
  JointVector lower, upper;
  // Command interpolation: q_ref goes from q_from at t_from to q_to at t_to.
  JointVector q_from, q_to, v_ff = JointVector::Zero();
  double t_from = 0.0;
  double t_to = 0.0;
  bool pending = false;
  std::array<mjtByte, mjNGROUP> ray_groups{};  // group 0 only: the scene
  double step_time = 0.0;
  bool fault = false;
  // The state before the last physics step (see checkpoint()); its layout is pack()'s.
  ArmCheckpoint before_last_step;

  // [time, qpos, qvel, act, qacc_warmstart, ctrl, q_from, q_to, v_ff, t_from, t_to]
  std::size_t checkpoint_size() const {
    return 1 + static_cast<std::size_t>(m->nq + 2 * m->nv + m->na + m->nu) +
           3 * static_cast<std::size_t>(kArmDof) + 2;
  }
  void pack(ArmCheckpoint& out) const noexcept {
    std::size_t k = 0;
    const auto put = [&](const mjtNum* v, int n) {
      for (int i = 0; i < n; ++i) out.values[k++] = v[i];
    };
    out.values[k++] = d->time;
    put(d->qpos, m->nq);
    put(d->qvel, m->nv);
    put(d->act, m->na);
    put(d->qacc_warmstart, m->nv);
    put(d->ctrl, m->nu);
    put(q_from.data(), kArmDof);
    put(q_to.data(), kArmDof);
    put(v_ff.data(), kArmDof);
    out.values[k++] = t_from;
    out.values[k++] = t_to;
    out.size = static_cast<std::uint32_t>(k);
  }
  void unpack(const ArmCheckpoint& in) noexcept {
    std::size_t k = 0;
    const auto get = [&](mjtNum* v, int n) {
      for (int i = 0; i < n; ++i) v[i] = in.values[k++];
    };
    d->time = in.values[k++];
    get(d->qpos, m->nq);
    get(d->qvel, m->nv);
    get(d->act, m->na);
    get(d->qacc_warmstart, m->nv);
    get(d->ctrl, m->nu);
    get(q_from.data(), kArmDof);
    get(q_to.data(), kArmDof);
    get(v_ff.data(), kArmDof);
    t_from = in.values[k++];
    t_to = in.values[k++];
  }
  // One physics step with the servos: what advance_to() repeats.
  void step() noexcept {
    const double dt = m->opt.timestep;
    if (camera) place_target(d->time);
    if (mount_mocap >= 0) turn_head(dt);
    mj_step1(m.get(), d.get());
    video->step(d->time, d.get());
    if (rendered) {
      rendered->step(d->time, d.get());
    } else if (camera) {
      camera->step(d->time, gripper_pose() * options.camera.tool_T_camera);
    }
    set_servo_controls(d->time + dt);
    mj_step2(m.get(), d.get());
    if (diverged()) fault = true;
  }

  // Moves the visual target's mocap body to where its path has it at arm time t.
  void place_target(double t) noexcept {
    const Frame pose = camera->target_pose(t);
    const Eigen::Quaterniond q(pose.R);
    for (int k = 0; k < 3; ++k) d->mocap_pos[3 * target_mocap + k] = pose.p[k];
    d->mocap_quat[4 * target_mocap + 0] = q.w();
    d->mocap_quat[4 * target_mocap + 1] = q.x();
    d->mocap_quat[4 * target_mocap + 2] = q.y();
    d->mocap_quat[4 * target_mocap + 3] = q.z();
  }

  // Turns the pan-tilt head towards its aim at kAimRate: R = Rz(pan) · R0 · Rx(tilt), pan
  // about BASE z, tilt about the cameras' own x axis.
  void turn_head(double dt) noexcept {
    const double step = camera::kAimRate * dt;
    const double pan_to = pan_target.load(std::memory_order_relaxed);
    const double tilt_to = tilt_target.load(std::memory_order_relaxed);
    if (pan == pan_to && tilt == tilt_to) return;
    pan += std::clamp(pan_to - pan, -step, step);
    tilt += std::clamp(tilt_to - tilt, -step, step);
    const Eigen::Quaterniond q(Eigen::AngleAxisd(pan, Vector3::UnitZ()).toRotationMatrix() *
                               base_T_mount0.R *
                               Eigen::AngleAxisd(tilt, Vector3::UnitX()).toRotationMatrix());
    d->mocap_quat[4 * mount_mocap + 0] = q.w();
    d->mocap_quat[4 * mount_mocap + 1] = q.x();
    d->mocap_quat[4 * mount_mocap + 2] = q.y();
    d->mocap_quat[4 * mount_mocap + 3] = q.z();
  }

  JointVector reference(double t) const {
    if (!(t_to > t_from)) return q_to;
    const double alpha = std::clamp((t - t_from) / (t_to - t_from), 0.0, 1.0);
    return q_from + alpha * (q_to - q_from);
  }

  // Servo law through the actuators: force = K_p·ctrl − K_p·q − K_d·q̇, so
  // ctrl = q_ref + (K_d·q̇_ff + b)/K_p gives τ = K_p(q_ref − q) + K_d(q̇_ff − q̇) + b, which
  // MuJoCo clamps to ±effort. Needs qfrc_bias of the current state (mj_step1/mj_forward).
  void set_servo_controls(double t_ref) {
    const JointVector q_ref = reference(t_ref);
    for (int i = 0; i < kArmDof; ++i) {
      d->ctrl[i] = q_ref[i] + (kd[i] * v_ff[i] + d->qfrc_bias[i]) / kp[i];
    }
  }

  // The gripper's frame (TOOL as deflected by the wrist compliance) in BASE, from the last
  // kinematics MuJoCo computed.
  Frame gripper_pose() const {
    const mjtNum* p = d->xpos + 3 * static_cast<std::ptrdiff_t>(gripper_body);
    const mjtNum* x = d->xmat + 9 * static_cast<std::ptrdiff_t>(gripper_body);  // row-major
    Frame f;
    f.R << x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8];
    f.p = Vector3(p[0], p[1], p[2]);
    return f;
  }

  bool diverged() const {
    if (d->warning[mjWARN_BADQACC].number > 0 || d->warning[mjWARN_BADQVEL].number > 0 ||
        d->warning[mjWARN_BADQPOS].number > 0) {
      return true;
    }
    for (int i = 0; i < m->nq; ++i) {
      if (!std::isfinite(d->qpos[i])) return true;
    }
    return false;
  }

  void compute_gains() {
    DataPtr scratch(mj_makeData(m.get()));
    std::mt19937_64 rng(20240611);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    JointVector inertia = JointVector::Zero();
    for (int n = 0; n < 64; ++n) {
      for (int i = 0; i < kArmDof; ++i) {
        scratch->qpos[i] = lower[i] + (upper[i] - lower[i]) * unit(rng);
      }
      mj_forward(m.get(), scratch.get());
      for (int i = 0; i < kArmDof; ++i) {
        inertia[i] = std::max(inertia[i], scratch->qM[m->dof_Madr[i]]);
      }
    }
    const double omega = 2.0 * kPi * options.servo.bandwidth;
    kp = inertia * omega * omega;
    kd = 2.0 * options.servo.damping_ratio * omega * inertia;
    for (int i = 0; i < kArmDof; ++i) {
      m->actuator_gainprm[i * mjNGAIN + 0] = kp[i];
      m->actuator_biasprm[i * mjNBIAS + 0] = 0.0;
      m->actuator_biasprm[i * mjNBIAS + 1] = -kp[i];
      m->actuator_biasprm[i * mjNBIAS + 2] = -kd[i];
    }
  }

  void proximity(ProximityReading& out) const {
    const ProximitySensorParameters& sensor = options.proximity_sensor;
    const mjtNum* p = d->site_xpos + 3 * static_cast<std::ptrdiff_t>(proximity_site);
    const mjtNum* x = d->site_xmat + 9 * static_cast<std::ptrdiff_t>(proximity_site);  // row-major
    const Vector3 origin(p[0], p[1], p[2]);
    Matrix3 R;
    R << x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8];
    const Vector3 beam = -R.col(2);
    out = ProximityReading{};
    std::array<Vector3, 4> hits;
    std::array<bool, 4> hit{};
    for (int k = 0; k < 4; ++k) {
      Vector3 start = origin;
      if (k > 0) {
        const double phi = 2.0 * kPi * (k - 1) / 3.0;
        start += sensor.beam_offset * (std::cos(phi) * R.col(0) + std::sin(phi) * R.col(1));
      }
      int geom = -1;
      const double distance =
          mj_ray(m.get(), d.get(), start.data(), beam.data(), ray_groups.data(), 1, -1, &geom);
      hit[k] = distance >= 0.0 && distance <= sensor.range;
      if (hit[k]) hits[k] = start + distance * beam;
      if (k == 0 && hit[k]) out.distance = distance;
    }
    if (!hit[0]) return;
    out.valid = true;
    // Plane through the outer hits (or the centre and two of them).
    std::array<Vector3, 3> plane;
    int count = 0;
    for (int k = 1; k < 4 && count < 3; ++k) {
      if (hit[k]) plane[static_cast<std::size_t>(count++)] = hits[k];
    }
    if (count == 2) plane[static_cast<std::size_t>(count++)] = hits[0];
    if (count < 3) return;
    Vector3 normal = (plane[1] - plane[0]).cross(plane[2] - plane[0]);
    if (!(normal.norm() > 1e-12)) return;
    normal.normalize();
    if (normal.dot(R.col(2)) < 0.0) normal = -normal;
    out.surface_normal = R.transpose() * normal;
  }
};

SimulatedArm::SimulatedArm(const ArmModel& arm, const SimulationOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  if (arm.dof() != kArmDof) {
    throw std::invalid_argument("SimulatedArm: arm '" + arm.name + "' (" + arm.source + ") has " +
                                std::to_string(arm.dof()) + " joints, needs 7");
  }
  s.arm = arm;
  s.options = options;
  detail::keep_software_rendering_on_the_calling_thread();
  s.q0 = options.initial_position ? *options.initial_position
                                  : default_initial_position(options.scene, arm);
  check_options(arm, options, s.q0);
  const KinematicModel kinematics(arm);
  s.lower = kinematics.lower_limits();
  s.upper = kinematics.upper_limits();
  KinematicState state;
  forward_kinematics(kinematics, s.q0, state);
  s.base_T_tool0 = state.tool;

  detail::MjcfScene scene;
  scene.kind = options.scene;
  scene.timestep = options.timestep;
  scene.gripper = options.gripper;
  scene.wrist = options.wrist;
  scene.base_T_tool = s.base_T_tool0;
  scene.door = options.door;
  scene.tool_T_sensor = options.proximity_sensor.tool_T_sensor;
  switch (options.scene) {
    case SceneKind::kFreeSpace:
      break;
    case SceneKind::kDoor: {
      // The hinge is TOOL −x: vertical only if TOOL x points down.
      const double tilt = std::acos(std::clamp(-state.tool.R(2, 0), -1.0, 1.0));
      if (tilt > 1.0 * kDegToRad) {
        throw std::invalid_argument(
            "SimulatedArm: the door scene needs the initial TOOL x axis pointing down (BASE "
            "−z) within 1°, so the hinge is vertical; it is " +
            std::to_string(tilt * kRadToDeg) + "° off");
      }
      scene.base_T_hinge = s.base_T_tool0 * door_hinge_in_tool(options.door, options.gripper);
      break;
    }
    case SceneKind::kWall:
      scene.base_T_wall = s.base_T_tool0 * remote::wall_in_tool(options.wall, options.gripper);
      if (options.wall.elbow_obstacle) {
        s.spheres = {default_obstacles(arm, s.q0).front()};
        scene.spheres = s.spheres;
      }
      break;
    case SceneKind::kObstacles:
      s.spheres = options.obstacles.spheres.empty() ? default_obstacles(arm, s.q0)
                                                    : options.obstacles.spheres;
      scene.spheres = s.spheres;
      break;
    case SceneKind::kVisualTarget: {
      s.camera.emplace(options.camera, options.visual_target,
                       s.base_T_tool0 * options.camera.tool_T_camera);
      scene.tag_size = options.visual_target.size;
      scene.base_T_target = s.camera->target_pose(0.0);
      break;
    }
    case SceneKind::kProximityTarget:
      scene.target = options.proximity_target;
      scene.base_T_plate = s.base_T_tool0 * options.proximity_sensor.tool_T_sensor *
                           remote::proximity_target_in_sensor(options.proximity_target);
      break;
  }
  // The scene's cameras, on the bodies that carry them.
  const std::vector<SceneCamera> cameras =
      scene_cameras(options.scene, s.base_T_tool0, options.camera);
  for (const SceneCamera& c : cameras) {
    if (c.mount == "camera_mount") {
      // The mount's frame is the pair's EYE frame: midway, oriented as the cameras are.
      scene.base_T_camera_mount = c.pose;
      scene.base_T_camera_mount.p -=
          (c.name == "stereo_left" ? -0.5 : 0.5) * kStereoBaseline * c.pose.R.col(0);
    }
  }
  for (const SceneCamera& c : cameras) {
    detail::MjcfCamera mj;
    mj.name = c.name;
    mj.fov_x = c.field_of_view;
    mj.width = c.width;
    mj.height = c.height;
    if (c.mount == "gripper") {
      mj.pose = s.base_T_tool0.inverse() * c.pose;
      scene.gripper_cameras.push_back(mj);
    } else if (c.mount == "camera_mount") {
      mj.pose = scene.base_T_camera_mount.inverse() * c.pose;
      scene.mount_cameras.push_back(mj);
    } else {
      mj.pose = c.pose;
      scene.world_cameras.push_back(mj);
    }
    scene.offscreen_width = std::max(scene.offscreen_width, c.width);
    scene.offscreen_height = std::max(scene.offscreen_height, c.height);
  }
  s.xml = detail::build_mjcf(arm, scene);
  s.description = detail::describe_scene(scene, std::string(scene_name(options.scene)));
  s.description.cameras = cameras;
  if (s.camera) {
    // The marker, where it starts (it moves: VisualTargetParameters).
    SceneBody marker;
    marker.name = "visual_target";
    marker.shape = SceneBody::Shape::kBox;
    marker.size =
        Vector3(0.5 * options.visual_target.size, 0.5 * options.visual_target.size, 0.001);
    marker.pose = s.camera->target_pose(0.0);
    marker.tag = SceneTag{options.visual_target.tag_id, options.visual_target.size};
    s.description.bodies.push_back(marker);
  }
  s.m = compile(s.xml, arm, options.scene);
  s.d = DataPtr(mj_makeData(s.m.get()));
  if (!s.d) throw std::runtime_error("SimulatedArm: MuJoCo could not allocate its data");

  s.force_adr = s.m->sensor_adr[find(s.m.get(), mjOBJ_SENSOR, "ft_force")];
  s.torque_adr = s.m->sensor_adr[find(s.m.get(), mjOBJ_SENSOR, "ft_torque")];
  s.proximity_site = find(s.m.get(), mjOBJ_SITE, "proximity");
  s.gripper_body = find(s.m.get(), mjOBJ_BODY, "gripper");
  for (int i = 0; i < kArmDof; ++i) {
    const std::string name = "arm_joint_" + std::to_string(i);
    const int joint = find(s.m.get(), mjOBJ_JOINT, name.c_str());
    if (s.m->jnt_qposadr[joint] != i || s.m->jnt_dofadr[joint] != i) {
      throw std::runtime_error("SimulatedArm: generated model orders the arm joints wrongly");
    }
  }
  if (s.camera) {
    // The tag's cells into the texture the model left blank (rows top down, as printed).
    const int texture = find(s.m.get(), mjOBJ_TEXTURE, "tag");
    const int cell = s.m->tex_width[texture] / vision::kTag36h11Cells;
    const std::vector<std::uint8_t> tag =
        vision::tag36h11_image(options.visual_target.tag_id, cell);
    const int side = vision::kTag36h11Cells * cell;
    mjtByte* rgb = s.m->tex_rgb + s.m->tex_adr[texture];
    for (int y = 0; y < s.m->tex_height[texture]; ++y) {
      for (int x = 0; x < s.m->tex_width[texture]; ++x) {
        const auto row = static_cast<std::size_t>(std::min(y, side - 1));
        const auto col = static_cast<std::size_t>(std::min(x, side - 1));
        const std::uint8_t v = tag[row * static_cast<std::size_t>(side) + col];
        for (int k = 0; k < 3; ++k) rgb[3 * (y * s.m->tex_width[texture] + x) + k] = v;
      }
    }
    s.target_mocap = s.m->body_mocapid[find(s.m.get(), mjOBJ_BODY, "visual_target")];
  }
  if (!scene.mount_cameras.empty()) {
    s.mount_mocap = s.m->body_mocapid[find(s.m.get(), mjOBJ_BODY, "camera_mount")];
    s.base_T_mount0 = scene.base_T_camera_mount;
  }
  if (options.scene == SceneKind::kDoor) {
    const int hinge = find(s.m.get(), mjOBJ_JOINT, "door_hinge");
    s.door_qpos = s.m->jnt_qposadr[hinge];
    s.door_dof = s.m->jnt_dofadr[hinge];
  }
  s.ray_groups.fill(0);
  s.ray_groups[0] = 1;

  s.compute_gains();

  mj_resetData(s.m.get(), s.d.get());
  for (int i = 0; i < kArmDof; ++i) s.d->qpos[i] = s.q0[i];
  if (s.camera) s.place_target(0.0);
  s.q_from = s.q0;
  s.q_to = s.q0;
  if (options.wrist.enabled) {
    const char* names[6] = {"wrist_x", "wrist_y", "wrist_z", "wrist_rx", "wrist_ry", "wrist_rz"};
    for (std::size_t k = 0; k < 6; ++k) {
      const int joint = find(s.m.get(), mjOBJ_JOINT, names[k]);
      s.wrist_qpos[k] = s.m->jnt_qposadr[joint];
      s.wrist_dof[k] = s.m->jnt_dofadr[joint];
    }
  }
  if (options.wrist.enabled) {
    // The springs carry the gripper's weight undeflected at the initial posture (their rest
    // positions preloaded, as the TOOL frame is calibrated with the gripper mounted), so
    // TOOL is where the gripper is at the start, the door's weld starts satisfied and the
    // sensor reads the gripper's weight in every scene; elsewhere the gripper deflects by the
    // change of its load over the stiffness. At rest the passive spring force −K (q − q_spring)
    // balances the bias forces (gravity): at q = 0, K q_spring = bias.
    mj_forward(s.m.get(), s.d.get());
    for (std::size_t k = 0; k < 6; ++k) {
      const double stiffness =
          k < 3 ? options.wrist.translational_stiffness : options.wrist.rotational_stiffness;
      s.m->qpos_spring[s.wrist_qpos[k]] = s.d->qfrc_bias[s.wrist_dof[k]] / stiffness;
    }
  }
  // Twice: the servo controls need the bias forces of the initial state.
  mj_forward(s.m.get(), s.d.get());
  s.set_servo_controls(0.0);
  mj_forward(s.m.get(), s.d.get());
  {
    std::vector<int> ids;
    for (const SceneCamera& c : s.description.cameras) {
      ids.push_back(find(s.m.get(), mjOBJ_CAMERA, c.name.c_str()));
    }
    s.video = std::make_unique<detail::VideoRig>(s.m.get(), s.description.cameras, ids);
  }
  if (s.camera && options.camera.source == CameraSource::kRendered) {
    s.rendered = std::make_unique<detail::RenderedCamera>(
        s.m.get(), find(s.m.get(), mjOBJ_CAMERA, "wrist"), options.camera,
        options.visual_target.size, options.visual_target.tag_id, options.render_timing);
  }
  if ((options.scene == SceneKind::kWall || options.scene == SceneKind::kObstacles) &&
      s.d->ncon > 0) {
    throw std::invalid_argument(std::string("SimulatedArm: the arm starts in contact with the ") +
                                to_string(options.scene) + " scene (" + std::to_string(s.d->ncon) +
                                " contacts)");
  }
}

SimulatedArm::~SimulatedArm() = default;

const ArmModel& SimulatedArm::model() const { return impl_->arm; }

ArmStatus SimulatedArm::read(ArmState& state) noexcept {
  const Impl& s = *impl_;
  const mjData* d = s.d.get();
  state.time = d->time;
  for (int i = 0; i < kArmDof; ++i) {
    state.position[i] = d->qpos[i];
    state.velocity[i] = d->qvel[i];
  }
  for (int i = 0; i < 3; ++i) {
    state.wrench[i] = d->sensordata[s.force_adr + i];
    state.wrench[i + 3] = d->sensordata[s.torque_adr + i];
  }
  state.wrench_valid = true;
  s.proximity(state.proximity);
  state.aux.fill(0.0);
  if (s.door_qpos >= 0) {
    state.aux[0] = d->qpos[s.door_qpos];
    state.aux[1] = d->qvel[s.door_dof];
  }
  state.aux[2] = static_cast<double>(d->ncon);
  if (impl_->rendered) {
    state.visual = impl_->rendered->reading(d->time);
  } else {
    state.visual = s.camera ? impl_->camera->reading(d->time) : VisualReading{};
  }
  return s.fault ? ArmStatus::kFault : ArmStatus::kOk;
}

ArmStatus SimulatedArm::write(const JointCommand& command) noexcept {
  Impl& s = *impl_;
  if (!command.position.allFinite() || !command.velocity.allFinite()) return ArmStatus::kFault;
  s.q_from = s.reference(s.d->time);
  s.q_to = command.position.cwiseMax(s.lower).cwiseMin(s.upper);
  s.v_ff = command.velocity;
  s.pending = true;
  return s.fault ? ArmStatus::kFault : ArmStatus::kOk;
}

void SimulatedArm::advance_to(double time) noexcept {
  Impl& s = *impl_;
  const auto start = std::chrono::steady_clock::now();
  mjModel* m = s.m.get();
  mjData* d = s.d.get();
  const double dt = m->opt.timestep;
  if (s.pending) {
    s.t_from = d->time;
    s.t_to = time;
    s.pending = false;
  }
  const bool can_checkpoint = !s.camera && s.checkpoint_size() <= kMaxArmCheckpoint;
  while (!s.fault && d->time + 0.5 * dt < time) {
    if (can_checkpoint && d->time + 1.5 * dt >= time) s.pack(s.before_last_step);
    s.step();
  }
  s.step_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool SimulatedArm::checkpoint(ArmCheckpoint& out) const noexcept {
  out = impl_->before_last_step;
  return out.size > 0;
}

bool SimulatedArm::restore(const ArmCheckpoint& state) {
  Impl& s = *impl_;
  if (s.camera || state.size != s.checkpoint_size()) return false;
  s.unpack(state);
  s.pending = false;
  s.fault = false;
  s.before_last_step = state;
  s.step();
  return !s.fault;
}

const SimulationOptions& SimulatedArm::options() const { return impl_->options; }
const JointVector& SimulatedArm::initial_position() const { return impl_->q0; }
const Frame& SimulatedArm::initial_tool_pose() const { return impl_->base_T_tool0; }
double SimulatedArm::time() const { return impl_->d->time; }
double SimulatedArm::timestep() const { return impl_->m->opt.timestep; }

Frame SimulatedArm::hinge_in_tool() const {
  if (impl_->options.scene != SceneKind::kDoor) {
    throw std::logic_error("SimulatedArm::hinge_in_tool: the scene has no door");
  }
  return door_hinge_in_tool(impl_->options.door, impl_->options.gripper);
}

Frame SimulatedArm::wall_in_tool() const {
  if (impl_->options.scene != SceneKind::kWall) {
    throw std::logic_error("SimulatedArm::wall_in_tool: the scene has no wall");
  }
  return remote::wall_in_tool(impl_->options.wall, impl_->options.gripper);
}

const std::vector<Sphere>& SimulatedArm::obstacles() const {
  if (impl_->options.scene != SceneKind::kObstacles && impl_->options.scene != SceneKind::kWall) {
    throw std::logic_error("SimulatedArm::obstacles: the scene has no obstacles");
  }
  return impl_->spheres;
}

Frame SimulatedArm::proximity_target_in_sensor() const {
  if (impl_->options.scene != SceneKind::kProximityTarget) {
    throw std::logic_error("SimulatedArm::proximity_target_in_sensor: the scene has no target");
  }
  return remote::proximity_target_in_sensor(impl_->options.proximity_target);
}

const GripperParameters& SimulatedArm::gripper() const { return impl_->options.gripper; }
const JointVector& SimulatedArm::servo_stiffness() const { return impl_->kp; }
const JointVector& SimulatedArm::servo_damping() const { return impl_->kd; }
double SimulatedArm::physics_step_time() const { return impl_->step_time; }
Vector6 SimulatedArm::wrist_deflection() const {
  Vector6 out = Vector6::Zero();
  for (std::size_t k = 0; k < 6; ++k) {
    if (impl_->wrist_qpos[k] >= 0) out[static_cast<int>(k)] = impl_->d->qpos[impl_->wrist_qpos[k]];
  }
  return out;
}

const std::vector<SceneCamera>& SimulatedArm::cameras() const { return impl_->description.cameras; }

std::unique_ptr<camera::CameraWatch> SimulatedArm::watch(const std::string& name,
                                                         camera::ImageSink sink) {
  return impl_->video->watch(name, std::move(sink));
}

std::string SimulatedArm::aim(const std::string& name, double pan, double tilt) {
  const auto& cameras = impl_->description.cameras;
  const auto it = std::find_if(cameras.begin(), cameras.end(),
                               [&](const SceneCamera& c) { return c.name == name; });
  if (it == cameras.end()) return "camera '" + name + "': no such camera here";
  if (it->mount != "camera_mount" || impl_->mount_mocap < 0) {
    return "camera '" + name + "' is not on the pan-tilt head (its mount: " +
           (it->mount.empty() ? std::string("fixed in the cell") : it->mount) + ")";
  }
  impl_->pan_target.store(std::clamp(pan, -camera::kMaxPan, camera::kMaxPan));
  impl_->tilt_target.store(std::clamp(tilt, -camera::kMaxTilt, camera::kMaxTilt));
  return {};
}

CameraStatistics SimulatedArm::camera_statistics() const {
  return impl_->rendered ? impl_->rendered->statistics() : CameraStatistics{};
}

Vector3 SimulatedArm::visual_target_in_camera() const {
  if (!impl_->camera) {
    throw std::logic_error("SimulatedArm::visual_target_in_camera: the scene has no target");
  }
  const Frame base_T_camera = impl_->gripper_pose() * impl_->options.camera.tool_T_camera;
  return base_T_camera.inverse() * impl_->camera->target_pose(impl_->d->time).p;
}

const std::string& SimulatedArm::mjcf() const { return impl_->xml; }

const SceneDescription& SimulatedArm::scene_description() const { return impl_->description; }

}  // namespace tether::remote
