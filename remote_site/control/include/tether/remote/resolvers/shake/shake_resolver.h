#pragma once

// The SHAKE patent as a redundancy resolver of the 7-DOF S-R-S arm (task.resolver.kind = kShake,
// parameters task.resolver.shake). Each cycle:
//   1. the MOTION frame is advanced by the commanded ẋ_c for one period (translation in
//      MOTION axes, rotation by exp on the right), the tool pose follows through
//      tool_T_motion⁻¹, and the wrist W and tool origin T are placed where that pose puts
//      them (srs_chain.h); the shoulder S never moves;
//   2. SHAKE (shake.h) restores the link lengths of the chain S–E–W–T with only the elbow E
//      free, starting from the elbow carried on by last cycle's joint velocity (q + q̇ dt), so
//      the self-motion continues smoothly; then `trials` times: E moves by a random vector
//      (components uniform in [−s, s], seeded std::mt19937_64), SHAKE, evaluate the objective
//      below, accept by the Metropolis rule at `temperature` (0: only improvements, i.e.
//      random search) — provided the trial keeps the hard limits below;
//   3. the joint angles that realise (tool pose, E) are recovered by Gauss–Newton (srs_chain.h),
//      to 1e-10 m / rad, warm-started from the joints predicted for E;
//   4. q̇ = (q_new − q)/dt.
//
// Hard limits of a trial (a trial that breaks one is rejected unless it breaks it less than
// the configuration it would replace, so a configuration already outside can only come back):
//   - acceleration: the elbow may leave the carried-on elbow by at most Δψ_max of arm angle,
//     Δψ_max = kSelfMotionShare · dt² · min_i a_i/|n_i|, n = ∂q/∂ψ at fixed hand (the 7th column
//     of the composite Jacobian's inverse), a_i the joints' acceleration limits: the self-motion
//     then never changes a joint velocity faster than its limit allows, and the executor never
//     has to scale the whole q̇ (which would slow the hand). s = min(step, r Δψ_max), r the
//     elbow circle's radius. (At 1 kHz and 10 rad/s² that is micrometres of elbow per cycle:
//     millimetre random steps made the elbow's velocity jump, the executor's acceleration
//     scaling then held back the hand, and tracking errors of 24–104 mm followed.)
//   - joint limits: the joints predicted for the trial, q ≈ q_hand + n wrap(ψ − ψ(q)), q_hand =
//     q + J⁻¹ (ẋ_c dt, 0) the joints that move the hand at constant ψ, stay within
//     [lower + m_i + kJointLimitBuffer, upper − m_i − kJointLimitBuffer], m = the task's
//     bounds.joint_limit_margin — SHAKE keeps the limits itself; the executor's clamp is
//     only a last resort;
//   - obstacles: no segment S–E, E–W comes closer than the sphere's radius of influence plus
//     kInfluenceMargin (the spheres-of-influence patent's constraint, as DLS keeps it).
// If the composite Jacobian cannot be inverted (a singular configuration) the prediction is
// off: no acceleration bound (s = step) and the joint limits are left to the executor.
//
// If the commanded hand motion would take W out of reach (the elbow circle shrinks below
// kMinElbowOffset × the shorter arm link, i.e. the elbow within ~1° of stretched, or vanishes)
// the largest reachable fraction of it is taken (bisection) and reported as kInfeasible with
// that achieved_fraction; the arm keeps running. A recovery that does not converge returns its
// best iterate as kInfeasible; a recovery whose normal matrix cannot be factorised, an elbow
// on the shoulder–wrist line or an arm that is not S-R-S (srs_violation) gives kSingular and
// q̇ = 0; non-finite input gives kNonFiniteInput and q̇ = 0.
//
// Look-ahead: the position terms (obstacle, reference, joint limit) and the joint and
// obstacle hard limits are evaluated with the elbow where the self-motion would come to rest at
// the acceleration bound, ψ + v|v|/(2 Δψ_max) with v = wrap(ψ − ψ(q)) this cycle's step: the
// search then brakes in time instead of overshooting a strong pull (a greedy next-sample
// choice under an acceleration bound oscillates with growing amplitude). The periodic term is
// not looked ahead: its target moves (braking on the motion relative to it was tried and, at
// 1 kHz, carried the search's noise from one period into the next and grew), and that target
// was itself reached under the same bound, so a greedy pull follows it.
//
// Objective (all terms ≥ 0, summed; positions BASE [m], angles [rad], rates per second):
//   E_obstacle     = obstacle_weight Σ_{segments S–E, E–W} Σ_obstacles φ(c),
//                    c = |segment to sphere centre| − sphere radius − link radius − influence
//                    [m] (the seed's individual minimum distance d₀ is the radius of influence),
//                    φ(c) = 1/c for c ≥ c_min = kMinClearance, else its tangent continuation
//                    1/c_min + (c_min − c)/c_min² (finite and still growing inside); the link
//                    radius of a segment is the largest capsule radius (input.link_radius) of
//                    the arm links between its two points. W–T is fixed by the hand pose, the
//                    same for every trial, so it does not enter.
//   E_velocity     = velocity_weight Σ_k |ω_k|², ω_k the joint angular velocity of chain joint k
//                    (objective.h's definition: rotation of link k relative to link k−1, link 0
//                    = joint 1's axis) between the configuration at input.q and the candidate;
//   E_acceleration = acceleration_weight Σ_k |(ω_k − ω_k,previous)/dt|² (from the second cycle);
//   E_reference    = reference_weight |E − E(q_reference)|²;
//   E_arm_angle    = arm_angle_weight wrap(ψ(S, E, W) − ψ_d)²,  ψ_d = input.arm_angle + ẋ_c[6] dt,
//                    ψ with task.arm_angle_reference (common/arm_angle.h);
//   E_periodic     = periodic_weight ρ |E − E(t − P)|²,  P = round(period/dt) cycles, with the
//                    elbow of P cycles earlier from a ring buffer of P entries, switched on after
//                    one period over R = max(1, round(periodic_ramp/dt)) cycles by the smoothstep
//                    ρ = 3x² − 2x³, x = clamp((t − P)/R, 0, 1), t = cycles since reset;
//   E_joint_limit  = kJointLimitWeight Σ_i σ_i²,  σ_i = max(0, 1 − room_i/kJointLimitZone), room_i
//                    the predicted joint's distance to its (narrowed) limit [rad]: zero away
//                    from the limits, 1 per joint on one.
//
// Real time: reset() and resolve() allocate nothing (buffers sized in the constructor for
// P ≤ max_period_steps). A cycle costs trials × (SHAKE + objective) plus a few forward
// kinematics and one 7×7 LU; see the tests for measured times.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tether/remote/resolvers/resolver.h"
#include "tether/remote/resolvers/shake/objective.h"
#include "tether/remote/resolvers/shake/point_chain.h"
#include "tether/remote/resolvers/shake/shake.h"
#include "tether/remote/resolvers/shake/srs_chain.h"
#include "tether/remote/task/validation.h"

namespace tether::remote::shake {

// Largest period/dt the ring buffer holds by default (16.4 s at 1 kHz, 328 s at 20 ms).
inline constexpr int kShakeMaxPeriodSteps = kMaxShakePeriodSteps;  // task validation's cap
inline constexpr double kMinClearance = 1e-3;                      // c_min of φ [m]
inline constexpr double kMinElbowOffset = 0.01;  // elbow circle radius / shorter arm link
// Share of each joint's acceleration limit the self-motion may use per cycle; the rest is the
// hand's.
inline constexpr double kSelfMotionShare = 0.5;
inline constexpr double kJointLimitBuffer = 0.01;  // [rad] inside the task's margin
inline constexpr double kJointLimitZone = 0.2;     // [rad] where E_joint_limit starts
inline constexpr double kJointLimitWeight = 1.0;
inline constexpr double kInfluenceMargin = 0.002;  // [m] beyond the radius of influence

// The objective's terms of one configuration (see above).
struct ShakeTerms {
  double obstacle = 0.0, velocity = 0.0, acceleration = 0.0, reference = 0.0, arm_angle = 0.0,
         periodic = 0.0, joint_limit = 0.0;
  double total() const {
    return obstacle + velocity + acceleration + reference + arm_angle + periodic + joint_limit;
  }
};

// What the last resolve() did, for tests, telemetry and pictures.
struct ShakeCycleReport {
  int accepted = 0;                  // trials accepted (worse ones included)
  int accepted_worse = 0;            // by the Metropolis rule at T > 0
  int rejected_unconverged = 0;      // trials whose SHAKE did not converge
  int placement_iterations = 0;      // SHAKE sweeps placing the wrist
  bool placement_projected = false;  // SHAKE did not converge; E projected onto its circle
  double fraction = 1.0;             // of the commanded hand motion targeted (reach)
  ShakeTerms terms{};                // of the chosen configuration
  double min_clearance = 0.0;        // over S–E, E–W, W–T and all obstacles [m] (+∞: none)
  double cyclicity_residual = -1.0;  // |E − E(t − P)| [m]; −1 before one period
  bool predicted = false;            // the composite Jacobian was inverted (hard limits on)
  double max_self_motion = 0.0;      // Δψ_max [rad] (+∞ without prediction)
  int rejected_limits = 0;           // trials rejected by a hard limit
  double min_joint_room = 0.0;       // of the chosen, predicted [rad] (+∞ without prediction)
  RecoveryReport recovery{};
};

class ShakeResolver final : public Resolver {
 public:
  // `model` must outlive the resolver. Reads the arm's S-R-S geometry (srs_geometry) and
  // checks it (srs_violation); an arm that is not S-R-S is accepted here (the site builds
  // every resolver for whatever arm it drives) and refused per cycle with kSingular. Throws
  // std::invalid_argument for max_period_steps < 1.
  explicit ShakeResolver(const KinematicModel& model, int max_period_steps = kShakeMaxPeriodSteps);
  ShakeResolver(const ShakeResolver&) = delete;  // the objective points into the chain
  ShakeResolver& operator=(const ShakeResolver&) = delete;

  // Reseeds the RNG with task.resolver.shake.seed and forgets the history (velocities,
  // periodic ring). A period beyond the ring is clamped to it (task validation refuses it).
  void reset(const TaskParameters& task, const ResolverInput& input) noexcept override;
  void resolve(const TaskParameters& task, const ResolverInput& input,
               ResolverResult& result) noexcept override;

  const ShakeCycleReport& last_cycle() const { return report_; }
  // The chosen chain S, E, W(, T) of the last cycle [m, BASE].
  const PointChain<3>::Points& points() const { return chosen_; }
  const SrsGeometry& geometry() const { return geometry_; }
  bool is_srs() const { return srs_problem_.empty(); }
  const std::string& srs_problem() const { return srs_problem_; }
  int max_period_steps() const { return static_cast<int>(ring_.size()); }

 private:
  // What the hard limits of a trial see.
  struct Feasibility {
    double self_motion = 0.0;  // |ψ − ψ_placed| beyond Δψ_max [rad], ≥ 0
    double joint = 0.0;        // largest predicted joint excursion past its narrowed limit [rad]
    double obstacle = 0.0;     // deepest segment entry into the influence (+ margin) [m], ≥ 0
    double room = 0.0;         // smallest predicted joint room [rad]
  };
  // The objective of configuration `p`; fills `feasible` with its hard-limit excursions.
  double objective(const TaskParameters& task, const ResolverInput& input,
                   const PointChain<3>::Points& p, ShakeTerms& terms,
                   Feasibility& feasible) noexcept;
  double segment_radius(const ResolverInput& input, int from_joint, int to_joint) const noexcept;

  const KinematicModel* model_;
  SrsGeometry geometry_;
  std::string srs_problem_;
  PointChain<3> chain_;
  Objective<3> rates_;  // only its joint_rates (dt = 1: rotation per cycle)
  std::vector<double> inverse_mass_;
  PointChain<3>::Points current_, previous_, placed_, trial_, chosen_, look_;
  std::vector<Eigen::Vector3d> rates_now_, rates_previous_, rates_trial_;
  std::vector<Vector3> ring_;  // elbow of every cycle, newest at ring_next_ − 1
  int ring_next_ = 0;
  std::int64_t cycles_ = 0;  // since reset
  bool have_previous_ = false;
  double previous_dt_ = 0.0;
  int period_steps_ = 0;
  int ramp_steps_ = 1;
  Vector3 elbow_reference_ = Vector3::Zero();
  double psi_target_ = 0.0;
  // The cycle's prediction of joints from the elbow (see the header comment).
  bool predicted_ = false;
  JointVector null_direction_ = JointVector::Zero();  // n = ∂q/∂ψ at fixed hand
  JointVector q_hand_ = JointVector::Zero();
  JointVector q_trial_ = JointVector::Zero();
  JointVector lower_ = JointVector::Zero(), upper_ = JointVector::Zero();  // narrowed limits
  double psi_now_ = 0.0, psi_placed_ = 0.0, max_self_motion_ = 0.0;
  double psi_sense_ = 1.0;  // ψ per rotation of the elbow about S→W: ±1
  std::mt19937_64 rng_;
  KinematicState scratch_;
  ShakeCycleReport report_;
};

}  // namespace tether::remote::shake
