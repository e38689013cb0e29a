#include "tether/remote/resolvers/shake/point_chain.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tether::remote::shake {
namespace {

template <int D>
Eigen::Matrix<double, D, 1> rotated(const Eigen::Matrix<double, D, 1>& u, double angle) {
  if constexpr (D == 2) {
    return Eigen::Rotation2Dd(angle) * u;
  } else {
    return u;  // 3-D telescopes are collinear (angle validated to be 0)
  }
}

std::string link_name(std::size_t index) { return "link " + std::to_string(index + 1); }

}  // namespace

template <int D>
PointChain<D>::PointChain(const Vec& base_direction, std::vector<Link> links, Points points)
    : links_(std::move(links)), points_(std::move(points)) {
  if (links_.empty()) throw std::invalid_argument("PointChain: needs at least one link");
  if (points_.size() != links_.size() + 1) {
    throw std::invalid_argument("PointChain: " + std::to_string(points_.size()) +
                                " points given for " + std::to_string(links_.size()) +
                                " links (need links + 1)");
  }
  if (!(base_direction.norm() > 0.0)) {
    throw std::invalid_argument("PointChain: base_direction must be non-zero");
  }
  base_direction_ = base_direction.normalized();
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    if (!(l.radius >= 0.0)) {
      throw std::invalid_argument("PointChain: " + link_name(i) + " radius " +
                                  std::to_string(l.radius) + " must be >= 0");
    }
    if (l.kind == LinkKind::kRevolute) {
      if (!(l.length > 0.0)) {
        throw std::invalid_argument("PointChain: " + link_name(i) + " length " +
                                    std::to_string(l.length) + " must be > 0");
      }
    } else {
      if (!(l.min_length >= 0.0 && l.max_length >= l.min_length && l.max_length > 0.0)) {
        throw std::invalid_argument(
            "PointChain: " + link_name(i) + " prismatic stroke [" + std::to_string(l.min_length) +
            ", " + std::to_string(l.max_length) + "] must satisfy 0 <= min <= max, max > 0");
      }
      if (D == 3 && l.relative_angle != 0.0) {
        throw std::invalid_argument("PointChain: " + link_name(i) + " relative_angle " +
                                    std::to_string(l.relative_angle) +
                                    " must be 0 in 3-D (collinear telescope)");
      }
    }
  }
}

template <int D>
typename PointChain<D>::Vec PointChain<D>::direction(const Points& p, int k) const {
  if (k == 0) return base_direction_;
  const Vec r = p[static_cast<std::size_t>(k)] - p[static_cast<std::size_t>(k - 1)];
  const double n = r.norm();
  return n > 0.0 ? Vec(r / n) : Vec(Vec::Zero());
}

template <int D>
typename PointChain<D>::Vec PointChain<D>::prismatic_axis(const Points& p, int k) const {
  Vec previous = direction(p, k - 1);
  // A degenerate previous link has no direction; fall back on the base direction.
  if (previous.squaredNorm() == 0.0) previous = base_direction_;
  return rotated<D>(previous, link(k).relative_angle);
}

template <int D>
double PointChain<D>::violation(const Points& p, int k) const {
  const Link& l = link(k);
  const Vec r = p[static_cast<std::size_t>(k)] - p[static_cast<std::size_t>(k - 1)];
  if (l.kind == LinkKind::kRevolute) return std::abs(r.norm() - l.length);
  const Vec d = prismatic_axis(p, k);
  const double s = std::clamp(r.dot(d), l.min_length, l.max_length);
  return (r - s * d).norm();
}

template <int D>
double PointChain<D>::max_violation(const Points& p) const {
  double worst = 0.0;
  for (int k = 1; k <= link_count(); ++k) worst = std::max(worst, violation(p, k));
  return worst;
}

template <int D>
typename PointChain<D>::Points stretched_configuration(const PointChain<D>& chain) {
  typename PointChain<D>::Points p(chain.points().size());
  p[0] = chain.points()[0];
  typename PointChain<D>::Vec u = chain.base_direction();
  for (int k = 1; k <= chain.link_count(); ++k) {
    const Link& l = chain.link(k);
    double length = l.length;
    if (l.kind == LinkKind::kPrismatic) {
      u = rotated<D>(u, l.relative_angle);
      length = 0.5 * (l.min_length + l.max_length);
    }
    p[static_cast<std::size_t>(k)] = p[static_cast<std::size_t>(k - 1)] + length * u;
  }
  return p;
}

template class PointChain<2>;
template class PointChain<3>;
template PointChain<2>::Points stretched_configuration(const PointChain<2>&);
template PointChain<3>::Points stretched_configuration(const PointChain<3>&);

}  // namespace tether::remote::shake
