#include "tether/common/teleop_channel.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tether {
namespace {

// Below this |v|² [m²/s²] (or |F|² [N²]) the port carries no power a PC could act on.
constexpr double kEpsilon = 1e-12;

bool valid_dt(double dt) { return std::isfinite(dt) && dt > 0.0; }

// Shortest round-trip spelling of a value ("0.5", "-1", "nan", "inf").
std::string spell(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

[[noreturn]] void reject(const char* field, double value, const char* range) {
  throw std::invalid_argument(std::string(field) + " = " + spell(value) + ": " + range);
}

// Accounts power P [W] for dt at a port: `positive` receives P dt when P > 0, `negative`
// receives −P dt otherwise.
void account(double power, double dt, double& positive, double& negative) {
  if (power > 0.0) {
    positive += power * dt;
  } else {
    negative -= power * dt;
  }
}

// Caps the norm of a 3-vector at `cap` (≥ 0).
Vector3 cap_norm(const Vector3& v, double cap) {
  const double norm = v.norm();
  return norm > cap ? Vector3(v * (cap / norm)) : v;
}

Vector6 per_row(const WaveImpedance& b) {
  Vector6 rows;
  rows << b.translation, b.translation, b.translation, b.rotation, b.rotation, b.rotation;
  return rows;
}

}  // namespace

const char* to_string(ReflectionMethod method) {
  switch (method) {
    case ReflectionMethod::kNone:
      return "none";
    case ReflectionMethod::kPassivity:
      return "passivity";
    case ReflectionMethod::kWave:
      return "wave";
  }
  return "unknown";
}

std::optional<ReflectionMethod> reflection_method_from_name(std::string_view name) {
  for (const ReflectionMethod method :
       {ReflectionMethod::kNone, ReflectionMethod::kPassivity, ReflectionMethod::kWave}) {
    if (name == to_string(method)) return method;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Energy-flow TDPA, ground side (impedance-type PC).

void MasterPassivity::reset() noexcept {
  energies_ = PortEnergies{};
  remote_in_ = 0.0;
  pending_dissipation_ = 0.0;
}

Vector6 MasterPassivity::control(const Vector6& v_m, const Vector6& F_m, double remote_in,
                                 double dt) noexcept {
  pending_dissipation_ = 0.0;
  if (!v_m.allFinite() || !F_m.allFinite() || !valid_dt(dt)) return Vector6::Zero();
  if (std::isfinite(remote_in) && remote_in > remote_in_) remote_in_ = remote_in;
  energies_.observed = remote_in_ - energies_.out;

  // Energy this sample would let out of the channel, against what may still leave it: the
  // slave's input so far minus our output so far. Normally out ≤ remote_in already; if not
  // (a clamp or a tiny |v| let a little more out), the PC does not push energy back in to
  // repay it — it only stops the balance from getting worse.
  const double power = F_m.dot(v_m);
  const double outflow = std::max(-power, 0.0) * dt;
  const double allowed = std::max(remote_in_ - energies_.out, 0.0);
  const double excess = outflow - allowed;
  // The damping acts on the port's own directions: the force and torque groups the channel
  // carries a wrench in. Damping the others would act on hand axes no energy flows through,
  // where a light wrist rings under a large α.
  Vector6 v_port = v_m;
  if (!(F_m.head<3>().squaredNorm() > 0.0)) v_port.head<3>().setZero();
  if (!(F_m.tail<3>().squaredNorm() > 0.0)) v_port.tail<3>().setZero();
  const double speed2 = v_port.squaredNorm();
  if (!(excess > 0.0) || !(speed2 > kEpsilon)) return F_m;
  // α|v|² dt = excess ≤ outflow, so the controlled power stays ≤ 0 and `out` grows by
  // exactly `allowed`.
  const double alpha = excess / (speed2 * dt);
  pending_dissipation_ = excess;
  return F_m + alpha * v_port;
}

Vector6 MasterPassivity::control_scaled(const Vector6& v_m, const Vector6& F_m, double remote_in,
                                        double dt) noexcept {
  pending_dissipation_ = 0.0;
  if (!v_m.allFinite() || !F_m.allFinite() || !valid_dt(dt)) return Vector6::Zero();
  if (std::isfinite(remote_in) && remote_in > remote_in_) remote_in_ = remote_in;
  energies_.observed = remote_in_ - energies_.out;
  const double outflow = std::max(-F_m.dot(v_m), 0.0) * dt;
  const double allowed = std::max(remote_in_ - energies_.out, 0.0);
  const double excess = outflow - allowed;
  if (!(excess > 0.0)) return F_m;
  // c·outflow = allowed: `out` grows by exactly what may still leave.
  pending_dissipation_ = excess;
  return (allowed / outflow) * F_m;
}

void MasterPassivity::commit(const Vector6& v_m, const Vector6& F_rendered, double dt) noexcept {
  const double dissipated = pending_dissipation_;
  pending_dissipation_ = 0.0;
  if (!v_m.allFinite() || !F_rendered.allFinite() || !valid_dt(dt)) return;
  account(F_rendered.dot(v_m), dt, energies_.in, energies_.out);
  energies_.dissipated += dissipated;
  energies_.observed = remote_in_ - energies_.out;
}

// ---------------------------------------------------------------------------------------
// Energy-flow TDPA, remote side (admittance-type PC) with drift compensation.

void validate(const DriftCompensation& drift) {
  if (!(drift.time_constant > 0.0 && drift.time_constant <= 100.0)) {
    reject("drift_compensation.time_constant", drift.time_constant, "must be in (0, 100] s");
  }
  if (!(drift.energy_share > 0.0 && drift.energy_share <= 1.0)) {
    reject("drift_compensation.energy_share", drift.energy_share, "must be in (0, 1]");
  }
  if (!(drift.max_speed_translation >= 0.0 && std::isfinite(drift.max_speed_translation))) {
    reject("drift_compensation.max_speed_translation", drift.max_speed_translation,
           "must be >= 0 and finite (m/s)");
  }
  if (!(drift.max_speed_rotation >= 0.0 && std::isfinite(drift.max_speed_rotation))) {
    reject("drift_compensation.max_speed_rotation", drift.max_speed_rotation,
           "must be >= 0 and finite (rad/s)");
  }
}

SlavePassivity::SlavePassivity(const DriftCompensation& drift) : config_(drift) {
  validate(config_);
}

void SlavePassivity::reset() noexcept {
  energies_ = PortEnergies{};
  drift_.setZero();
  ground_in_ = 0.0;
}

Vector6 SlavePassivity::step(const Vector6& v_sd, const Vector6& F_s, double ground_in,
                             double dt) noexcept {
  if (!v_sd.allFinite() || !F_s.allFinite() || !valid_dt(dt)) return Vector6::Zero();
  if (std::isfinite(ground_in) && ground_in > ground_in_) ground_in_ = ground_in;

  // Passivity controller: take velocity off along F_s until the outflow fits.
  Vector6 v = v_sd;
  const double outflow = std::max(F_s.dot(v_sd), 0.0) * dt;
  const double allowed = std::max(ground_in_ - energies_.out, 0.0);
  const double excess = outflow - allowed;
  const double force2 = F_s.squaredNorm();
  if (excess > 0.0 && force2 > kEpsilon) {
    const double beta = excess / (force2 * dt);
    v -= beta * F_s;
    energies_.dissipated += excess;
  }
  drift_ += (v_sd - v) * dt;

  // Drift compensation: return the lag at |drift|/τ, capped, and only with the energy the
  // observer has to spare (a velocity that draws no power from the channel is free).
  Vector6 v_dc;
  v_dc.head<3>() =
      cap_norm(drift_.head<3>() / config_.time_constant, config_.max_speed_translation);
  v_dc.tail<3>() = cap_norm(drift_.tail<3>() / config_.time_constant, config_.max_speed_rotation);
  const double extra_power = F_s.dot(v_dc);
  if (extra_power > 0.0) {
    const double out_after_pc = energies_.out + std::max(F_s.dot(v), 0.0) * dt;
    const double available = config_.energy_share * std::max(ground_in_ - out_after_pc, 0.0);
    const double cost = extra_power * dt;
    if (cost > available) v_dc *= available / cost;
  }
  v += v_dc;
  drift_ -= v_dc * dt;

  account(F_s.dot(v), dt, energies_.out, energies_.in);
  energies_.observed = ground_in_ - energies_.out;
  return v;
}

Vector6 SlavePassivity::observe(const Vector6& v_sd, const Vector6& F_s, double ground_in,
                                double dt) noexcept {
  if (!v_sd.allFinite() || !F_s.allFinite() || !valid_dt(dt)) return Vector6::Zero();
  if (std::isfinite(ground_in) && ground_in > ground_in_) ground_in_ = ground_in;
  account(F_s.dot(v_sd), dt, energies_.out, energies_.in);
  energies_.observed = ground_in_ - energies_.out;
  return v_sd;
}

// ---------------------------------------------------------------------------------------
// Wave variables.

namespace {
// Gain of a first-order low-pass at `hz` for one step of dt (exact for a held input);
// 1 passes the wave through (no filter).
double wave_filter_gain(double hz, double dt) noexcept {
  return hz > 0.0 ? 1.0 - std::exp(-2.0 * M_PI * hz * dt) : 1.0;
}
}  // namespace

void validate(const WaveImpedance& b) {
  if (!(b.translation > 0.0 && std::isfinite(b.translation))) {
    reject("wave_impedance.translation", b.translation, "must be > 0 and finite (N·s/m)");
  }
  if (!(b.rotation > 0.0 && std::isfinite(b.rotation))) {
    reject("wave_impedance.rotation", b.rotation, "must be > 0 and finite (N·m·s/rad)");
  }
  if (!(b.filter_hz >= 0.0 && b.filter_hz <= 1000.0)) {
    reject("wave_impedance.filter_hz", b.filter_hz, "must be in [0, 1000] (Hz; 0 = none)");
  }
}

WaveMaster::WaveMaster(const WaveImpedance& b) {
  validate(b);
  b_ = per_row(b);
  sqrt_2b_ = (2.0 * b_.array()).sqrt().matrix();
  filter_hz_ = b.filter_hz;
}

void WaveMaster::reset() noexcept {
  force_.setZero();
  forward_wave_.setZero();
  filtered_.setZero();
  energies_ = PortEnergies{};
  remote_in_ = 0.0;
}

void WaveMaster::set_remote_in(double remote_in) noexcept {
  if (std::isfinite(remote_in) && remote_in > remote_in_) remote_in_ = remote_in;
  energies_.observed = remote_in_ - energies_.out;
}

void WaveMaster::step(const Vector6& v_m, const Vector6& w_m, double dt) noexcept {
  if (!v_m.allFinite() || !w_m.allFinite() || !valid_dt(dt)) {
    force_.setZero();
    forward_wave_.setZero();
    return;
  }
  filtered_ += wave_filter_gain(filter_hz_, dt) * (w_m - filtered_);
  force_ = (b_.array() * v_m.array() - sqrt_2b_.array() * filtered_.array()).matrix();
  forward_wave_ = (sqrt_2b_.array() * v_m.array() - filtered_.array()).matrix();
  account(force_.dot(v_m), dt, energies_.in, energies_.out);
  energies_.observed = remote_in_ - energies_.out;
}

WaveSlave::WaveSlave(const WaveImpedance& b) {
  validate(b);
  b_ = per_row(b);
  sqrt_2b_ = (2.0 * b_.array()).sqrt().matrix();
  sqrt_2_over_b_ = (2.0 * b_.array().inverse()).sqrt().matrix();
  filter_hz_ = b.filter_hz;
}

void WaveSlave::reset() noexcept {
  velocity_.setZero();
  return_wave_.setZero();
  filtered_.setZero();
  energies_ = PortEnergies{};
  ground_in_ = 0.0;
}

void WaveSlave::step(const Vector6& u_s, const Vector6& F_s, double ground_in, double dt) noexcept {
  if (!u_s.allFinite() || !F_s.allFinite() || !valid_dt(dt)) {
    velocity_.setZero();
    return_wave_.setZero();
    return;
  }
  if (std::isfinite(ground_in) && ground_in > ground_in_) ground_in_ = ground_in;
  filtered_ += wave_filter_gain(filter_hz_, dt) * (u_s - filtered_);
  velocity_ = ((sqrt_2b_.array() * filtered_.array() - F_s.array()) / b_.array()).matrix();
  return_wave_ = (filtered_.array() - sqrt_2_over_b_.array() * F_s.array()).matrix();
  account(F_s.dot(velocity_), dt, energies_.out, energies_.in);
  energies_.observed = ground_in_ - energies_.out;
}

}  // namespace tether
