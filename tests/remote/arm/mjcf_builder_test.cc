// The generated MJCF, compiled by MuJoCo itself: the chain matches tether's kinematics, mass
// properties, limits, drives and contact filtering are what the simulated arm relies on.

#include "mjcf_builder.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <memory>
#include <random>

#include "sim_test_support.h"

namespace tether::remote::detail {
namespace {

using testing::kDeg;

struct Compiled {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::string error;
  ~Compiled() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
};

std::unique_ptr<Compiled> compile(const std::string& xml) {
  auto out = std::make_unique<Compiled>();
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  EXPECT_EQ(mj_makeEmptyFileVFS(vfs.get(), "t.xml", static_cast<int>(xml.size())), 0);
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "t.xml")], xml.data(), xml.size());
  char error[1024] = {0};
  out->m = mj_loadXML("t.xml", vfs.get(), error, sizeof(error));
  mj_deleteVFS(vfs.get());
  out->error = error;
  if (out->m) out->d = mj_makeData(out->m);
  return out;
}

MjcfScene scene_at(const ArmModel& arm, const JointVector& q, SceneKind kind) {
  const KinematicModel model(arm);
  KinematicState state;
  forward_kinematics(model, q, state);
  MjcfScene scene;
  scene.kind = kind;
  scene.base_T_tool = state.tool;
  scene.base_T_hinge = state.tool * door_hinge_in_tool(scene.door, scene.gripper);
  scene.base_T_wall = state.tool * wall_in_tool({}, scene.gripper);
  scene.base_T_plate = state.tool * scene.tool_T_sensor * proximity_target_in_sensor({});
  scene.spheres = default_obstacles(arm, q);
  return scene;
}

TEST(MjcfBuilder, BodyChainReproducesTetherForwardKinematicsForBothArms) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    const KinematicModel model(arm.model);
    const auto sim = compile(
        build_mjcf(arm.model, scene_at(arm.model, JointVector::Zero(), SceneKind::kFreeSpace)));
    ASSERT_NE(sim->m, nullptr) << sim->error;
    ASSERT_EQ(sim->m->nq, 7 + 6);  // the arm, then the wrist compliance (relaxed: q = 0)
    const int gripper = mj_name2id(sim->m, mjOBJ_BODY, "gripper");
    const int site = mj_name2id(sim->m, mjOBJ_SITE, "ft_sensor");
    ASSERT_GE(gripper, 0);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    KinematicState state;
    for (int n = 0; n < 20; ++n) {
      JointVector q;
      for (int i = 0; i < 7; ++i) {
        q[i] = model.lower_limits()[i] +
               (model.upper_limits()[i] - model.lower_limits()[i]) * unit(rng);
        sim->d->qpos[i] = q[i];
      }
      mj_kinematics(sim->m, sim->d);
      forward_kinematics(model, q, state);
      const Vector3 p(sim->d->xpos + 3 * static_cast<std::ptrdiff_t>(gripper));
      Matrix3 R;
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) R(r, c) = sim->d->site_xmat[9 * site + 3 * r + c];
      }
      EXPECT_LT((p - state.tool.p).norm(), 1e-9);
      EXPECT_LT((R - state.tool.R).norm(), 1e-9);
    }
  }
}

TEST(MjcfBuilder, CarriesLimitsEffortsArmatureAndMassProperties) {
  const ArmModel arm = load_default_arm();
  const auto sim =
      compile(build_mjcf(arm, scene_at(arm, JointVector::Zero(), SceneKind::kFreeSpace)));
  ASSERT_NE(sim->m, nullptr) << sim->error;
  const JointVector armature = rotor_inertia(arm);
  EXPECT_NEAR(armature[0], 0.44, 1e-12);  // 176 N·m / 400 s⁻²
  EXPECT_NEAR(armature[6], 0.1, 1e-12);
  for (int i = 0; i < 7; ++i) {
    const ArmJoint& joint = arm.joints[static_cast<std::size_t>(i)];
    EXPECT_NEAR(sim->m->jnt_range[2 * static_cast<std::ptrdiff_t>(i)], joint.limits.lower, 1e-12);
    EXPECT_NEAR(sim->m->jnt_range[2 * static_cast<std::ptrdiff_t>(i) + 1], joint.limits.upper,
                1e-12);
    EXPECT_NEAR(sim->m->dof_armature[i], armature[i], 1e-12);
    EXPECT_GT(sim->m->dof_damping[i], 0.0);
    EXPECT_NEAR(sim->m->actuator_forcerange[2 * i + 1], joint.limits.effort, 1e-12);
    EXPECT_TRUE(sim->m->actuator_forcelimited[i]);
    const int body = mj_name2id(sim->m, mjOBJ_BODY, ("arm_link_" + std::to_string(i)).c_str());
    EXPECT_NEAR(sim->m->body_mass[body], joint.link.mass, 1e-9);
  }
  const int gripper = mj_name2id(sim->m, mjOBJ_BODY, "gripper");
  EXPECT_NEAR(sim->m->body_mass[gripper], 0.8, 1e-12);
  EXPECT_EQ(sim->m->opt.integrator, mjINT_IMPLICIT);
  EXPECT_NEAR(sim->m->opt.timestep, 0.0005, 1e-15);
}

TEST(MjcfBuilder, RaisesMasslessLinksToTheFloorsMuJoCoAccepts) {
  ArmModel arm = load_default_arm();
  arm.joints[6].link = LinkInertia{};  // a URDF link without <inertial>
  const auto sim =
      compile(build_mjcf(arm, scene_at(arm, JointVector::Zero(), SceneKind::kFreeSpace)));
  ASSERT_NE(sim->m, nullptr) << sim->error;
  EXPECT_NEAR(sim->m->body_mass[mj_name2id(sim->m, mjOBJ_BODY, "arm_link_6")], 1e-3, 1e-12);
}

TEST(MjcfBuilder, RejectsArmsAndScenesItCannotBuildWithContext) {
  ArmModel six = load_default_arm();
  six.joints.pop_back();
  try {
    build_mjcf(six, MjcfScene{});
    FAIL() << "a 6-joint arm was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has 6 joints"), std::string::npos) << e.what();
  }
  const ArmModel arm = load_default_arm();
  MjcfScene scene = scene_at(arm, JointVector::Zero(), SceneKind::kDoor);
  scene.door.panel_width = 0.3;  // narrower than the handle's distance to the hinge
  EXPECT_THROW(build_mjcf(arm, scene), std::invalid_argument);
  scene = scene_at(arm, JointVector::Zero(), SceneKind::kObstacles);
  scene.spheres.push_back({Vector3(1.0, 0.0, 0.0), -0.1});
  try {
    build_mjcf(arm, scene);
    FAIL() << "a sphere of negative radius was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("obstacle sphere 3"), std::string::npos) << e.what();
  }
}

TEST(MjcfBuilder, ArmCollidesWithTheSceneButNeverWithItself) {
  const ArmModel arm = load_default_arm();
  const JointVector q = default_initial_position(SceneKind::kObstacles, arm);
  const auto sim = compile(build_mjcf(arm, scene_at(arm, q, SceneKind::kObstacles)));
  ASSERT_NE(sim->m, nullptr) << sim->error;
  const mjModel* m = sim->m;
  for (int a = 0; a < m->ngeom; ++a) {
    for (int b = a + 1; b < m->ngeom; ++b) {
      const bool collides = (m->geom_contype[a] & m->geom_conaffinity[b]) ||
                            (m->geom_contype[b] & m->geom_conaffinity[a]);
      const bool arm_a = m->geom_group[a] == 1;
      const bool arm_b = m->geom_group[b] == 1;
      const bool base = m->geom_bodyid[a] == 0 && arm_a;  // the base is visual only
      // Group 2 is only seen by the cameras (the floor).
      if (m->geom_group[a] == 2 || m->geom_group[b] == 2) {
        EXPECT_FALSE(collides) << a << " " << b;
        continue;
      }
      if (arm_a && arm_b) {
        EXPECT_FALSE(collides) << a << " " << b;
      }
      if (arm_a != arm_b && !base) {
        EXPECT_TRUE(collides) << a << " " << b;
      }
    }
  }
}

TEST(MjcfBuilder, DoorWeldHoldsTheHandleWhereTheGripperIsAtTheInitialPosture) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    const JointVector q = default_initial_position(SceneKind::kDoor, arm.model);
    const auto sim = compile(build_mjcf(arm.model, scene_at(arm.model, q, SceneKind::kDoor)));
    ASSERT_NE(sim->m, nullptr) << sim->error;
    ASSERT_EQ(sim->m->nq, 7 + 6 + 1);  // the arm, the wrist compliance, the door's hinge
    const int hinge = sim->m->jnt_qposadr[mj_name2id(sim->m, mjOBJ_JOINT, "door_hinge")];
    ASSERT_EQ(hinge, 13);
    for (int i = 0; i < 7; ++i) sim->d->qpos[i] = q[i];
    mj_forward(sim->m, sim->d);
    int rows = 0;
    for (int r = 0; r < sim->d->nefc; ++r) {
      if (sim->d->efc_type[r] != mjCNSTR_EQUALITY) continue;
      ++rows;
      EXPECT_NEAR(sim->d->efc_pos[r], 0.0, 1e-9) << "weld row " << r;
    }
    EXPECT_EQ(rows, 6);
    // A misplaced weld would show at once: open the door in the model by 10° and the
    // constraint is violated.
    sim->d->qpos[hinge] = 10.0 * kDeg;
    mj_forward(sim->m, sim->d);
    double violation = 0.0;
    for (int r = 0; r < sim->d->nefc; ++r) {
      if (sim->d->efc_type[r] == mjCNSTR_EQUALITY) violation += std::abs(sim->d->efc_pos[r]);
    }
    EXPECT_GT(violation, 0.05);
  }
}

}  // namespace
}  // namespace tether::remote::detail
