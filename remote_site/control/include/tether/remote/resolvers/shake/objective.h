#pragma once

// The objective the annealing resolver minimises (the SHAKE patent). Every term is a plain function
// of point positions — current, earlier ones from the history — so no derivative is needed.
// All terms are ≥ 0; E = the sum of the enabled (weight > 0) terms below. dt is the resolver
// time step [s]; the history holds accepted configurations, ago(1) = the previous step.
//
// Obstacles (2-D: polygons and circles; 3-D: oriented boxes and spheres) are grown by each
// link's radius: the clearance of link k to an obstacle is c = dist(segment p_{k-1}p_k,
// obstacle) − radius_k [m]. The segment distance covers both the seed's joint-to-wall and
// corner/centre-to-link distances (it is their minimum). Polygons may be non-convex; boxes use
// the exact convex signed distance minimised along the segment.
//   E_obstacle = w_obs Σ_k Σ_obstacles φ(c),  φ(c) = 1/c for c ≥ c_min, and for c < c_min the
//   tangent continuation 1/c_min + (c_min − c)/c_min² (finite and still growing inside).
// Joint angular velocity of joint k (between link k−1 and link k; link 0 = base direction) as a
// rotation vector ω_k: in 2-D the change of the signed relative angle, (0, 0, Δθ_k)/dt; in 3-D
// the rotation taking u_k(t−1), carried along by the minimal rotation of u_{k-1}(t−1) onto
// u_{k-1}(t), onto u_k(t), as axis·angle / dt (twist about the previous link is not seen).
//   E_velocity     = w_v Σ_k |ω_k|²             (or w_v max_k |ω_k|² with use_max)
//   E_acceleration = w_a Σ_k |(ω_k(t) − ω_k(t−1))/dt|²   (or the squared maximum)
//   E_prismatic    = w_pv Σ_prismatic (Δs_k/dt)² + w_pa Σ_prismatic (Δ²s_k/dt²)²
// (velocity terms need one, acceleration terms two configurations of history; until then
// they are 0.)
//   E_reference = w_ref Σ_{k=1}^{N−1} |p_k − p_k^ref|²   (stretched or any given configuration)
// End-link alignment near workpiece edges/corners — the seed's formula is lost; this one is
// chosen: for each feature with surface point q and outward unit normal n, s = |p_N − q| and
// the end link u_N should point into the surface (u_N = −n):
//   E_align = Σ_features c exp(−s/b) (1 − cos α),  cos α = −u_N·n,
// c = strength, b = decay length [m]: full strength on the feature, fading over a few b.
// Features are points with a normal (corners, edges) or circles/spheres, whose q is the
// nearest surface point to p_N and n the radial normal.
// Periodic trajectories: with a period of P steps and at least P configurations recorded
// (t ≥ P), a term pulls every joint toward its position one period earlier, switched on over
// R steps with a smoothstep ramp ρ = 3x² − 2x³, x = clamp((t − P)/R, 0, 1):
//   E_periodic = w_per ρ Σ_{k=1}^{N−1} |p_k(t) − p_k(t−P)|².
// The cyclicity residual max_k |p_k(t) − p_k(t−P)| [m] is reported by the resolver.

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "tether/remote/resolvers/shake/point_chain.h"

namespace tether::remote::shake {

struct Polygon {  // 2-D, simple (possibly non-convex), vertices in order
  std::vector<Eigen::Vector2d> vertices{};
};
struct Circle {
  Eigen::Vector2d centre = Eigen::Vector2d::Zero();
  double radius = 0.0;
};
struct Box {  // 3-D oriented box: world point = centre + rotation · local
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d half_extents = Eigen::Vector3d::Zero();
};
struct Sphere {
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  double radius = 0.0;
};

template <int D>
struct Obstacles;
template <>
struct Obstacles<2> {
  std::vector<Polygon> polygons{};
  std::vector<Circle> circles{};
};
template <>
struct Obstacles<3> {
  std::vector<Box> boxes{};
  std::vector<Sphere> spheres{};
};

// Distance of the segment ab to an obstacle [m]: 0 when it touches or enters a polygon; for
// circles, spheres and boxes the signed distance (negative: penetration depth).
double segment_distance(const Polygon& polygon, const Eigen::Vector2d& a, const Eigen::Vector2d& b);
double segment_distance(const Circle& circle, const Eigen::Vector2d& a, const Eigen::Vector2d& b);
double segment_distance(const Box& box, const Eigen::Vector3d& a, const Eigen::Vector3d& b);
double segment_distance(const Sphere& sphere, const Eigen::Vector3d& a, const Eigen::Vector3d& b);

template <int D>
struct AlignmentFeature {  // a corner or edge point with its outward unit normal
  Eigen::Matrix<double, D, 1> point = Eigen::Matrix<double, D, 1>::Zero();
  Eigen::Matrix<double, D, 1> normal = Eigen::Matrix<double, D, 1>::Zero();
};
template <int D>
struct AlignmentSurface {  // a circle (2-D) or sphere (3-D) workpiece surface
  Eigen::Matrix<double, D, 1> centre = Eigen::Matrix<double, D, 1>::Zero();
  double radius = 0.0;
};

struct ObjectiveWeights {
  double dt = 0.01;  // resolver step [s]
  double obstacle = 0.0;
  double min_clearance = 1e-3;  // c_min [m]
  double joint_velocity = 0.0;
  double joint_acceleration = 0.0;
  bool use_max = false;  // squared maximum instead of the sum of squares
  double prismatic_velocity = 0.0;
  double prismatic_acceleration = 0.0;
  double reference = 0.0;
  double alignment_strength = 0.0;  // c
  double alignment_decay = 0.1;     // b [m]
  double periodic = 0.0;
  int period_steps = 0;  // P (0: no periodic term)
  int ramp_steps = 1;    // R
};

// Accepted configurations, newest last, in a ring buffer of capacity max(P, 2) allocated once.
template <int D>
class History {
 public:
  using Points = typename PointChain<D>::Points;
  History(int capacity, int point_count);
  void push(const Points& p);          // copies, no allocation
  const Points& ago(int steps) const;  // 1 ≤ steps ≤ size()
  int size() const { return size_; }
  std::int64_t pushed() const { return pushed_; }  // total configurations ever recorded
  int capacity() const { return static_cast<int>(ring_.size()); }

 private:
  std::vector<Points> ring_;
  int next_ = 0;
  int size_ = 0;
  std::int64_t pushed_ = 0;
};

struct ObjectiveTerms {
  double obstacle = 0.0, velocity = 0.0, acceleration = 0.0, prismatic = 0.0, reference = 0.0,
         alignment = 0.0, periodic = 0.0;
  double total() const {
    return obstacle + velocity + acceleration + prismatic + reference + alignment + periodic;
  }
};

template <int D>
class Objective {
 public:
  using Vec = typename PointChain<D>::Vec;
  using Points = typename PointChain<D>::Points;

  // `chain` must outlive the objective: its link definitions are read on every evaluation
  // (its points are not; configurations are passed in).
  // Throws std::invalid_argument for non-positive dt, min_clearance or decay, a negative
  // weight, a reference of the wrong size, a zero feature normal or a negative period/ramp.
  Objective(const PointChain<D>& chain, Obstacles<D> obstacles, ObjectiveWeights weights,
            std::vector<AlignmentFeature<D>> features = {},
            std::vector<AlignmentSurface<D>> surfaces = {}, Points reference = {});

  ObjectiveTerms terms(const Points& p, const History<D>& history) const;
  double operator()(const Points& p, const History<D>& history) const {
    return terms(p, history).total();
  }

  // Smallest link clearance to any obstacle [m] (+∞ without obstacles).
  double min_clearance(const Points& p) const;
  // Angle between u_N and −n of the feature or surface nearest to the end effector [rad]
  // (0 without features).
  double alignment_error(const Points& p) const;
  // Angle between u_N and −n of one feature.
  double alignment_error(const Points& p, const AlignmentFeature<D>& feature) const;
  // max_k |p_k − p_k(t−P)| against the configuration P steps ago (needs size() ≥ P).
  double cyclicity_residual(const Points& p, const History<D>& history) const;
  // Joint angular velocity vectors ω_k (k = 1 … N) between two configurations, into `out`.
  void joint_rates(const Points& earlier, const Points& later,
                   std::vector<Eigen::Vector3d>& out) const;

  const ObjectiveWeights& weights() const { return weights_; }
  const Obstacles<D>& obstacles() const { return obstacles_; }
  const std::vector<AlignmentFeature<D>>& features() const { return features_; }
  const std::vector<AlignmentSurface<D>>& surfaces() const { return surfaces_; }

 private:
  double link_clearance(const Points& p, int k) const;

  const PointChain<D>* chain_;
  Obstacles<D> obstacles_;
  ObjectiveWeights weights_;
  std::vector<AlignmentFeature<D>> features_;
  std::vector<AlignmentSurface<D>> surfaces_;
  Points reference_;
  // Scratch for the rate terms: evaluation is not reentrant on one Objective.
  mutable std::vector<Eigen::Vector3d> rates_now_, rates_before_;
};

}  // namespace tether::remote::shake
