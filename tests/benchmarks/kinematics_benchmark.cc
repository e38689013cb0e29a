// tether kinematics against Orocos KDL on the same machine, same run, same
// configurations. Prints Google Benchmark's table, then tether/KDL time ratios.
//
//   build/release/tests/benchmarks/kinematics_benchmark

#include <benchmark/benchmark.h>

#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolvervel_wdls.hpp>
#include <kdl/chainjnttojacsolver.hpp>

#include "kdl_chain.h"
#include "ratio_reporter.h"
#include "test_arms.h"
#include "tether/common/dls.h"
#include "tether/common/motion_space.h"

namespace tether::bench {
namespace {

constexpr int kConfigurations = 1024;  // cycled through so no solver can cache

struct Fixture {
  explicit Fixture(const testing::ShippedArm& shipped)
      : model(testing::load(shipped)),
        chain(testing::kdl_chain_from_urdf(shipped.urdf, shipped.base, shipped.tool)),
        configurations(testing::random_configurations(model, kConfigurations, 2026)) {
    for (const JointVector& q : configurations) {
      KDL::JntArray k(kArmDof);
      for (int i = 0; i < kArmDof; ++i) k(static_cast<unsigned>(i)) = q[i];
      kdl_configurations.push_back(k);
    }
  }
  KinematicModel model;
  KDL::Chain chain;
  std::vector<JointVector> configurations;
  std::vector<KDL::JntArray> kdl_configurations;
};

const Fixture& fixture(int arm) {
  static const Fixture iiwa(testing::shipped_arms()[0]);
  static const Fixture panda(testing::shipped_arms()[1]);
  return arm == 0 ? iiwa : panda;
}

void ForwardKinematicsTether(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  KinematicState state;
  std::size_t n = 0;
  for (auto _ : s) {
    forward_kinematics(f.model, f.configurations[n++ % kConfigurations], state);
    benchmark::DoNotOptimize(state.tool);
  }
}

void ForwardKinematicsKdl(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  KDL::ChainFkSolverPos_recursive solver(f.chain);
  KDL::Frame tool;
  std::size_t n = 0;
  for (auto _ : s) {
    solver.JntToCart(f.kdl_configurations[n++ % kConfigurations], tool);
    benchmark::DoNotOptimize(tool);
  }
}

void JacobianTether(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  KinematicState state;
  Jacobian6 J;
  std::size_t n = 0;
  for (auto _ : s) {
    forward_kinematics(f.model, f.configurations[n++ % kConfigurations], state);
    tool_jacobian(state, J);
    benchmark::DoNotOptimize(J);
  }
}

void JacobianKdl(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  KDL::ChainJntToJacSolver solver(f.chain);
  KDL::Jacobian J(kArmDof);
  std::size_t n = 0;
  for (auto _ : s) {
    solver.JntToJac(f.kdl_configurations[n++ % kConfigurations], J);
    benchmark::DoNotOptimize(J.data);
  }
}

// One resolved-rate step from a configuration and a commanded velocity: kinematics,
// Jacobian, weighted damped least squares. tether solves the 7-D composite problem
// (pose + arm angle), KDL's wdls the 6-D pose problem by SVD.
void DlsStepTether(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  const ArmAngleModel arm_angle;
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  JointVector qdot;
  const MotionVector xdot = MotionVector::LinSpaced(-0.1, 0.1);
  const MotionVector weights = MotionVector::Ones();
  const JointVector damping = JointVector::Constant(1e-4);
  std::size_t n = 0;
  for (auto _ : s) {
    forward_kinematics(f.model, f.configurations[n++ % kConfigurations], state);
    composite_jacobian(f.model, state, arm_angle, Frame::Identity(), J, psi);
    benchmark::DoNotOptimize(weighted_dls<7>(J, weights, damping, xdot, qdot));
    benchmark::DoNotOptimize(qdot);
  }
}

void DlsStepKdl(benchmark::State& s, int arm) {
  const Fixture& f = fixture(arm);
  KDL::ChainIkSolverVel_wdls solver(f.chain);
  solver.setLambda(1e-2);  // λ² = 1e-4, the damping tether's step uses
  const KDL::Twist xdot(KDL::Vector(-0.1, -0.067, -0.033), KDL::Vector(0.0, 0.033, 0.067));
  KDL::JntArray qdot(kArmDof);
  std::size_t n = 0;
  for (auto _ : s) {
    solver.CartToJnt(f.kdl_configurations[n++ % kConfigurations], xdot, qdot);
    benchmark::DoNotOptimize(qdot.data);
  }
}

void register_all() {
  const char* arms[2] = {"iiwa7", "panda"};
  for (int arm = 0; arm < 2; ++arm) {
    const std::string a = arms[arm];
    benchmark::RegisterBenchmark(("ForwardKinematics/tether/" + a).c_str(), ForwardKinematicsTether,
                                 arm);
    benchmark::RegisterBenchmark(("ForwardKinematics/kdl/" + a).c_str(), ForwardKinematicsKdl, arm);
    benchmark::RegisterBenchmark(("Jacobian/tether/" + a).c_str(), JacobianTether, arm);
    benchmark::RegisterBenchmark(("Jacobian/kdl/" + a).c_str(), JacobianKdl, arm);
    benchmark::RegisterBenchmark(("DlsStep/tether/" + a).c_str(), DlsStepTether, arm);
    benchmark::RegisterBenchmark(("DlsStep/kdl/" + a).c_str(), DlsStepKdl, arm);
  }
}

}  // namespace
}  // namespace tether::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  tether::bench::register_all();
  tether::bench::RatioReporter reporter("kdl");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const bool met =
      reporter.PrintRatios({{"ForwardKinematics", 0.35}, {"Jacobian", 0.25}, {"DlsStep", 0.25}});
  benchmark::Shutdown();
  return met ? 0 : 1;
}
