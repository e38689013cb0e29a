#include "tether/remote/resolvers/shake/objective.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace tether::remote::shake {
namespace {

template <typename V>
double point_segment_distance(const V& x, const V& a, const V& b) {
  const V ab = b - a;
  const double l2 = ab.squaredNorm();
  const double t = l2 > 0.0 ? std::clamp((x - a).dot(ab) / l2, 0.0, 1.0) : 0.0;
  return (a + t * ab - x).norm();
}

double cross2(const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  return a.x() * b.y() - a.y() * b.x();
}

bool segments_intersect(const Eigen::Vector2d& a, const Eigen::Vector2d& b,
                        const Eigen::Vector2d& c, const Eigen::Vector2d& d) {
  const double d1 = cross2(b - a, c - a), d2 = cross2(b - a, d - a);
  const double d3 = cross2(d - c, a - c), d4 = cross2(d - c, b - c);
  return ((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)) && d1 != 0 && d2 != 0 && d3 != 0 &&
         d4 != 0;
}

bool inside(const Polygon& polygon, const Eigen::Vector2d& x) {
  bool in = false;
  const auto& v = polygon.vertices;
  for (std::size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    if ((v[i].y() > x.y()) != (v[j].y() > x.y()) &&
        x.x() < (v[j].x() - v[i].x()) * (x.y() - v[i].y()) / (v[j].y() - v[i].y()) + v[i].x()) {
      in = !in;
    }
  }
  return in;
}

double box_signed_distance(const Box& box, const Eigen::Vector3d& x) {
  const Eigen::Vector3d d =
      (box.rotation.transpose() * (x - box.centre)).cwiseAbs() - box.half_extents;
  return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
}

// Rotation vector (axis·angle) that turns unit a onto unit b; zero for (anti)parallel
// vectors without a defined axis.
Eigen::Vector3d rotation_vector(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const Eigen::Vector3d axis = a.cross(b);
  const double s = axis.norm();
  if (s < 1e-15) return Eigen::Vector3d::Zero();
  return axis / s * std::atan2(s, a.dot(b));
}

template <int D>
Eigen::Vector3d lift(const Eigen::Matrix<double, D, 1>& v) {
  if constexpr (D == 2) {
    return {v.x(), v.y(), 0.0};
  } else {
    return v;
  }
}

double barrier(double c, double c_min) {
  return c >= c_min ? 1.0 / c : 1.0 / c_min + (c_min - c) / (c_min * c_min);
}

double angle_between(double cosine) { return std::acos(std::clamp(cosine, -1.0, 1.0)); }

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("Objective: " + what);
}

}  // namespace

double segment_distance(const Polygon& polygon, const Eigen::Vector2d& a,
                        const Eigen::Vector2d& b) {
  const auto& v = polygon.vertices;
  if (v.size() < 3) return std::numeric_limits<double>::infinity();
  if (inside(polygon, a) || inside(polygon, b)) return 0.0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    if (segments_intersect(a, b, v[j], v[i])) return 0.0;
    best = std::min({best, point_segment_distance(a, v[j], v[i]),
                     point_segment_distance(b, v[j], v[i]), point_segment_distance(v[i], a, b)});
  }
  return best;
}

double segment_distance(const Circle& circle, const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  return point_segment_distance(circle.centre, a, b) - circle.radius;
}

double segment_distance(const Sphere& sphere, const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return point_segment_distance(sphere.centre, a, b) - sphere.radius;
}

double segment_distance(const Box& box, const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  // The signed distance to a convex set is convex along a line, so a golden-section search
  // over the segment parameter finds its minimum.
  const auto f = [&](double t) { return box_signed_distance(box, a + t * (b - a)); };
  constexpr double kInvPhi = 0.6180339887498949;
  double lo = 0.0, hi = 1.0;
  double x1 = hi - kInvPhi * (hi - lo), x2 = lo + kInvPhi * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < 60; ++i) {
    if (f1 < f2) {
      hi = x2, x2 = x1, f2 = f1, x1 = hi - kInvPhi * (hi - lo), f1 = f(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2, x2 = lo + kInvPhi * (hi - lo), f2 = f(x2);
    }
  }
  return std::min({f(0.0), f(1.0), f1, f2});
}

template <int D>
History<D>::History(int capacity, int point_count)
    : ring_(static_cast<std::size_t>(std::max(capacity, 2)),
            Points(static_cast<std::size_t>(point_count))) {}

template <int D>
void History<D>::push(const Points& p) {
  auto& slot = ring_[static_cast<std::size_t>(next_)];
  std::copy(p.begin(), p.end(), slot.begin());
  next_ = (next_ + 1) % capacity();
  size_ = std::min(size_ + 1, capacity());
  ++pushed_;
}

template <int D>
const typename History<D>::Points& History<D>::ago(int steps) const {
  const int index = ((next_ - steps) % capacity() + capacity()) % capacity();
  return ring_[static_cast<std::size_t>(index)];
}

template <int D>
Objective<D>::Objective(const PointChain<D>& chain, Obstacles<D> obstacles,
                        ObjectiveWeights weights, std::vector<AlignmentFeature<D>> features,
                        std::vector<AlignmentSurface<D>> surfaces, Points reference)
    : chain_(&chain),
      obstacles_(std::move(obstacles)),
      weights_(weights),
      features_(std::move(features)),
      surfaces_(std::move(surfaces)),
      reference_(std::move(reference)),
      rates_now_(static_cast<std::size_t>(chain.link_count())),
      rates_before_(static_cast<std::size_t>(chain.link_count())) {
  const ObjectiveWeights& w = weights_;
  require(w.dt > 0.0, "dt " + std::to_string(w.dt) + " must be > 0");
  require(w.min_clearance > 0.0,
          "min_clearance " + std::to_string(w.min_clearance) + " must be > 0");
  require(w.alignment_decay > 0.0,
          "alignment_decay " + std::to_string(w.alignment_decay) + " must be > 0");
  for (double x : {w.obstacle, w.joint_velocity, w.joint_acceleration, w.prismatic_velocity,
                   w.prismatic_acceleration, w.reference, w.alignment_strength, w.periodic}) {
    require(x >= 0.0, "weights must be >= 0 (got " + std::to_string(x) + ")");
  }
  require(w.period_steps >= 0, "period_steps " + std::to_string(w.period_steps) + " must be >= 0");
  require(w.ramp_steps >= 1, "ramp_steps " + std::to_string(w.ramp_steps) + " must be >= 1");
  require(w.reference == 0.0 || reference_.size() == chain.points().size(),
          "reference has " + std::to_string(reference_.size()) + " points, chain has " +
              std::to_string(chain.points().size()));
  for (auto& f : features_) {
    require(f.normal.norm() > 0.0, "alignment feature normal must be non-zero");
    f.normal.normalize();
  }
}

template <int D>
double Objective<D>::link_clearance(const Points& p, int k) const {
  const auto& a = p[static_cast<std::size_t>(k - 1)];
  const auto& b = p[static_cast<std::size_t>(k)];
  double best = std::numeric_limits<double>::infinity();
  if constexpr (D == 2) {
    for (const auto& o : obstacles_.polygons) best = std::min(best, segment_distance(o, a, b));
    for (const auto& o : obstacles_.circles) best = std::min(best, segment_distance(o, a, b));
  } else {
    for (const auto& o : obstacles_.boxes) best = std::min(best, segment_distance(o, a, b));
    for (const auto& o : obstacles_.spheres) best = std::min(best, segment_distance(o, a, b));
  }
  return best - chain_->link(k).radius;
}

template <int D>
double Objective<D>::min_clearance(const Points& p) const {
  double best = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= chain_->link_count(); ++k) best = std::min(best, link_clearance(p, k));
  return best;
}

template <int D>
void Objective<D>::joint_rates(const Points& earlier, const Points& later,
                               std::vector<Eigen::Vector3d>& out) const {
  const double inv_dt = 1.0 / weights_.dt;
  for (int k = 1; k <= chain_->link_count(); ++k) {
    const Eigen::Vector3d u_prev0 = lift<D>(chain_->direction(earlier, k - 1));
    const Eigen::Vector3d u_prev1 = lift<D>(chain_->direction(later, k - 1));
    const Eigen::Vector3d u0 = lift<D>(chain_->direction(earlier, k));
    const Eigen::Vector3d u1 = lift<D>(chain_->direction(later, k));
    Eigen::Vector3d w;
    if constexpr (D == 2) {
      const double before = std::atan2(u_prev0.cross(u0).z(), u_prev0.dot(u0));
      const double after = std::atan2(u_prev1.cross(u1).z(), u_prev1.dot(u1));
      w = {0.0, 0.0, std::remainder(after - before, 2.0 * std::numbers::pi)};
    } else {
      const Eigen::Vector3d carried = Eigen::Quaterniond::FromTwoVectors(u_prev0, u_prev1) * u0;
      w = rotation_vector(carried, u1);
    }
    out[static_cast<std::size_t>(k - 1)] = w * inv_dt;
  }
}

template <int D>
double Objective<D>::alignment_error(const Points& p, const AlignmentFeature<D>& feature) const {
  const Vec u = chain_->direction(p, chain_->link_count());
  return angle_between(-u.dot(feature.normal));
}

template <int D>
double Objective<D>::alignment_error(const Points& p) const {
  const Vec& tip = p.back();
  double nearest = std::numeric_limits<double>::infinity();
  double error = 0.0;
  const Vec u = chain_->direction(p, chain_->link_count());
  for (const auto& f : features_) {
    const double s = (tip - f.point).norm();
    if (s < nearest) nearest = s, error = angle_between(-u.dot(f.normal));
  }
  for (const auto& sf : surfaces_) {
    const Vec r = tip - sf.centre;
    const double s = std::abs(r.norm() - sf.radius);
    if (s < nearest && r.norm() > 0.0) nearest = s, error = angle_between(-u.dot(r.normalized()));
  }
  return error;
}

template <int D>
double Objective<D>::cyclicity_residual(const Points& p, const History<D>& history) const {
  const auto& past = history.ago(weights_.period_steps);
  double worst = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) worst = std::max(worst, (p[k] - past[k]).norm());
  return worst;
}

template <int D>
ObjectiveTerms Objective<D>::terms(const Points& p, const History<D>& history) const {
  const ObjectiveWeights& w = weights_;
  const int n = chain_->link_count();
  ObjectiveTerms e;
  if (w.obstacle > 0.0) {
    for (int k = 1; k <= n; ++k) {
      const auto& a = p[static_cast<std::size_t>(k - 1)];
      const auto& b = p[static_cast<std::size_t>(k)];
      const double r = chain_->link(k).radius;
      double sum = 0.0;
      if constexpr (D == 2) {
        for (const auto& o : obstacles_.polygons)
          sum += barrier(segment_distance(o, a, b) - r, w.min_clearance);
        for (const auto& o : obstacles_.circles)
          sum += barrier(segment_distance(o, a, b) - r, w.min_clearance);
      } else {
        for (const auto& o : obstacles_.boxes)
          sum += barrier(segment_distance(o, a, b) - r, w.min_clearance);
        for (const auto& o : obstacles_.spheres)
          sum += barrier(segment_distance(o, a, b) - r, w.min_clearance);
      }
      e.obstacle += w.obstacle * sum;
    }
  }
  const auto aggregate = [&](const std::vector<Eigen::Vector3d>& v) {
    double sum = 0.0, worst = 0.0;
    for (const auto& x : v) sum += x.squaredNorm(), worst = std::max(worst, x.squaredNorm());
    return w.use_max ? worst : sum;
  };
  if (history.size() >= 1 && (w.joint_velocity > 0.0 || w.joint_acceleration > 0.0)) {
    joint_rates(history.ago(1), p, rates_now_);
    e.velocity = w.joint_velocity * aggregate(rates_now_);
    if (history.size() >= 2 && w.joint_acceleration > 0.0) {
      joint_rates(history.ago(2), history.ago(1), rates_before_);
      for (std::size_t k = 0; k < rates_now_.size(); ++k) {
        rates_before_[k] = (rates_now_[k] - rates_before_[k]) / w.dt;
      }
      e.acceleration = w.joint_acceleration * aggregate(rates_before_);
    }
  }
  if (history.size() >= 1 && (w.prismatic_velocity > 0.0 || w.prismatic_acceleration > 0.0)) {
    for (int k = 1; k <= n; ++k) {
      if (chain_->link(k).kind != LinkKind::kPrismatic) continue;
      const auto i = static_cast<std::size_t>(k);
      const auto length = [&](const Points& q) { return (q[i] - q[i - 1]).norm(); };
      const double v = (length(p) - length(history.ago(1))) / w.dt;
      e.prismatic += w.prismatic_velocity * v * v;
      if (history.size() >= 2) {
        const double v0 = (length(history.ago(1)) - length(history.ago(2))) / w.dt;
        const double a = (v - v0) / w.dt;
        e.prismatic += w.prismatic_acceleration * a * a;
      }
    }
  }
  if (w.reference > 0.0) {
    for (int k = 1; k < n; ++k) {
      const auto i = static_cast<std::size_t>(k);
      e.reference += w.reference * (p[i] - reference_[i]).squaredNorm();
    }
  }
  if (w.alignment_strength > 0.0 && (!features_.empty() || !surfaces_.empty())) {
    const Vec u = chain_->direction(p, n);
    const Vec& tip = p.back();
    const double c = w.alignment_strength, b = w.alignment_decay;
    for (const auto& f : features_) {
      const double s = (tip - f.point).norm();
      e.alignment += c * std::exp(-s / b) * (1.0 + u.dot(f.normal));
    }
    for (const auto& sf : surfaces_) {
      const Vec r = tip - sf.centre;
      if (!(r.norm() > 0.0)) continue;
      const double s = std::abs(r.norm() - sf.radius);
      e.alignment += c * std::exp(-s / b) * (1.0 + u.dot(r.normalized()));
    }
  }
  if (w.periodic > 0.0 && w.period_steps > 0 && history.size() >= w.period_steps &&
      history.pushed() >= w.period_steps) {
    const double x =
        std::clamp(static_cast<double>(history.pushed() - w.period_steps) / w.ramp_steps, 0.0, 1.0);
    const double ramp = x * x * (3.0 - 2.0 * x);
    const auto& past = history.ago(w.period_steps);
    for (int k = 1; k < n; ++k) {
      const auto i = static_cast<std::size_t>(k);
      e.periodic += w.periodic * ramp * (p[i] - past[i]).squaredNorm();
    }
  }
  return e;
}

template class History<2>;
template class History<3>;
template class Objective<2>;
template class Objective<3>;

}  // namespace tether::remote::shake
