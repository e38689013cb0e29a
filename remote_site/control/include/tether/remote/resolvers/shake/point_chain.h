#pragma once

// The SHAKE patent: an over-complete Cartesian model of an N-link serial chain. Instead of joint
// angles the chain is described by the positions of all its joints, p_0 (the fixed base) …
// p_N (the end effector), plus one constraint per link. The redundancy resolver
// (annealing.h) moves these points freely and restores the constraints with SHAKE
// (shake.h), so no Jacobian or derivative of the objective is ever needed.
//
// Units: metres, radians. Frame: the world frame the base and obstacles are given in.
// 2-D angles are counter-clockwise positive.
//
// Link k (1 … N) joins p_{k-1} and p_k; its direction is u_k = (p_k − p_{k-1}) / |…|, and u_0
// is the fixed base direction (the direction "link 0" points in).
//   revolute:  |p_k − p_{k-1}| = L_k.
//   prismatic: p_k − p_{k-1} = s_k · d_k with s_k ∈ [min_length, max_length], where d_k is
//              fixed relative to the previous link: in 2-D d_k = Rot(relative_angle) · u_{k-1};
//              in 3-D the telescope is collinear with the previous link, d_k = u_{k-1}
//              (relative_angle must be 0 there, because a single angle does not fix a 3-D
//              direction).
//
// The 7-DOF S-R-S arm (for the integrator): use PointChain<3> with p_0 = the shoulder centre
// (tether_shoulder, fixed), three revolute links: upper arm L_1 = |elbow − shoulder|,
// forearm L_2 = |wrist − elbow| (tether_elbow, tether_wrist points of the arm at any
// configuration) and the hand L_3 = |tool point − wrist|; p_3 is the tool point that follows
// the path. The elbow p_1 then moves on the self-motion circle — its position carries the arm
// angle ψ — and the wrist p_2 is free to move on the sphere around the tool point, which the
// orientation (alignment) terms shape. Joint-angle recovery from (p_1, p_2, p_3) is not part
// of this unit.

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace tether::remote::shake {

enum class LinkKind : std::uint8_t { kRevolute, kPrismatic };

struct Link {
  LinkKind kind = LinkKind::kRevolute;
  double length = 0.0;      // revolute: the constant length [m] (> 0)
  double min_length = 0.0;  // prismatic: stroke limits [m], 0 ≤ min ≤ max
  double max_length = 0.0;
  double relative_angle = 0.0;  // prismatic, 2-D only: d_k relative to u_{k-1} [rad]
  double radius = 0.0;          // obstacles are grown by this [m] (≥ 0)
};

template <int D>
class PointChain {
 public:
  static_assert(D == 2 || D == 3, "a point chain is planar or spatial");
  using Vec = Eigen::Matrix<double, D, 1>;
  using Points = std::vector<Vec>;  // p_0 … p_N

  // Throws std::invalid_argument naming the link and field for an empty chain, a point count
  // other than links + 1, a non-positive length, bad prismatic limits, a negative radius, a
  // non-zero relative angle in 3-D, or a zero base direction.
  PointChain(const Vec& base_direction, std::vector<Link> links, Points points);

  int link_count() const { return static_cast<int>(links_.size()); }
  const Link& link(int k) const { return links_[static_cast<std::size_t>(k - 1)]; }  // k ≥ 1
  const Vec& base_direction() const { return base_direction_; }                      // unit

  const Points& points() const { return points_; }
  Points& points() { return points_; }

  // u_k of `p` (u_0 = the base direction); unit, or zero for a degenerate link.
  Vec direction(const Points& p, int k) const;
  // The direction a prismatic link k must have given the previous link in `p`.
  Vec prismatic_axis(const Points& p, int k) const;
  // |residual| of the constraint of link k in `p` [m].
  double violation(const Points& p, int k) const;
  double max_violation(const Points& p) const;

 private:
  Vec base_direction_;
  std::vector<Link> links_;
  Points points_;
};

// A configuration of a chain whose links all point along the base direction (prismatic links
// at their mid-stroke, relative angles applied): the "stretched" reference.
template <int D>
typename PointChain<D>::Points stretched_configuration(const PointChain<D>& chain);

extern template class PointChain<2>;
extern template class PointChain<3>;

}  // namespace tether::remote::shake
