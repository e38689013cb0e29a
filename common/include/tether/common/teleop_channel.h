#pragma once

// Delay-robust force reflection for a position–force teleoperation channel with 6-DOF
// ports: velocity forward (ground → remote), wrench back (remote → ground).
//
// Signals, all 6-vectors in the same (remote) axes, translation rows 0-2 then rotation
// rows 3-5 (types.h):
//   v_m  the operator's velocity the ground (master) sends [m/s, rad/s];
//   F_s  the wrench the robot applies to its environment, sent back [N, N·m];
//   F_m  the wrench the ground displays. The hand controller renders its reaction
//        −S⊙F_m on the operator (the scaling S lies outside this module);
//   v_s  the velocity the channel delivers to the slave (remote) controller.
// Power is the dot product over all six rows [W]. Sign conventions:
//   master port: power INTO the channel        P_m = F_m·v_m
//   slave port:  power OUT of the channel       P_s = F_s·v_s
// so an ideal, delay-free channel (F_m = F_s, v_s = v_m) has P_m = P_s.
//
// Two ways to keep the channel passive under communication delay:
//
// * Time-domain passivity (TDPA), energy-flow (bilateral) form: each port observes the
//   energy that left the channel there against the energy that entered at the other port
//   (as last received, delayed) and, when the balance would go negative, a passivity
//   controller (PC) dissipates exactly the excess. See B. Hannaford and J.-H. Ryu, "Time
//   domain passivity control of haptic interfaces" (IEEE T-RA 2002) for the observer/
//   controller pair, and J. Artigas, J.-H. Ryu et al., "Time Domain Passivity Control for
//   Position-Position Teleoperation Architectures" for the energy-flow form
//   in which each site needs only the other port's cumulative input energy. The admittance
//   PC at the slave makes the slave lag the master; the lag ("drift") is returned when the
//   energy balance allows, as in J. Artigas, J. Vilanova, C. Preusche and G. Hirzinger,
//   "Position drift compensation in time domain passivity based teleoperation" (IROS 2010).
//   MasterPassivity runs on the ground, SlavePassivity on the remote site; each sends its
//   port's cumulative `in` to the other.
//
// * Wave variables: G. Niemeyer and J.-J. E. Slotine, "Stable adaptive teleoperation"
//   (IEEE J. Oceanic Eng. 1991). The two sites exchange waves u (forward) and w (return)
//   instead of v and F; the channel is passive for any constant delay. Per row i with wave
//   impedance b_i > 0:
//     master: F_m = b v_m − √(2b) w_m,   u_m = √(2b) v_m − w_m     ( = (b v_m + F_m)/√(2b))
//     slave:  v_s = (√(2b) u_s − F_s)/b, w_s = u_s − √(2/b) F_s    ( = (b v_s − F_s)/√(2b))
//   and P_m = (|u_m|² − |w_m|²)/2, P_s = (|u_s|² − |w_s|²)/2.
//
// Real time: every step()/control()/commit() is noexcept, allocation-free (fixed-size
// Eigen only), logs nothing and throws nothing. Non-finite inputs are not used: the call
// returns zero and accounts no energy (details per function). Configuration is validated
// when an object is constructed (std::invalid_argument naming field, value and range).

#include <optional>
#include <string_view>

#include "tether/common/types.h"

namespace tether {

// The largest hand-controller increment one message may carry, in remote units: 10 m/s and
// 100 rad/s at 1 kHz. The remote refuses a larger one (a broken device or client, not an
// operator); the ground sends a late sample's motion (the host paused its thread) as
// several increments instead.
inline constexpr double kMaxIncrementTranslation = 0.01;  // [m]
inline constexpr double kMaxIncrementRotation = 0.1;      // [rad], also the arm angle's

// How the ground reflects the remote wrench.
enum class ReflectionMethod {
  kNone,       // direct: F_m = F_s (delayed), v_s = v_m (delayed); not passive under delay
  kPassivity,  // energy-flow TDPA with drift compensation (MasterPassivity/SlavePassivity)
  kWave,       // wave variables (WaveMaster/WaveSlave)
};

const char* to_string(ReflectionMethod method);  // "none", "passivity", "wave"
// The method spelt as to_string() spells it; nothing for anything else.
std::optional<ReflectionMethod> reflection_method_from_name(std::string_view name);

// Energy bookkeeping of one channel port, cumulative since reset, all [J].
struct PortEnergies {
  double in = 0.0;          // energy that entered the channel at this port (≥ 0)
  double out = 0.0;         // energy that left the channel at this port, after the PC (≥ 0)
  double observed = 0.0;    // E_obs = (other port's `in`, as last received) − out
  double dissipated = 0.0;  // what this port's passivity controller removed (≥ 0)
  friend bool operator==(const PortEnergies&, const PortEnergies&) = default;
};

// Ground side of the TDPA channel. Its port receives a wrench from the channel, so its PC
// is of impedance type: it adds a damping force along the operator's velocity.
class MasterPassivity {
 public:
  void reset() noexcept;

  // One sample. v_m: the velocity sent this sample; F_m: the wrench received (delayed);
  // remote_in: the newest cumulative slave `in` received (delayed; monotone — a smaller or
  // non-finite value than the last one is ignored); dt > 0 [s].
  // Returns F_m' = F_m + α v_p, α ≥ 0 the smallest damping that keeps `observed` ≥ 0 after
  // this sample (α|v_p|² dt is exactly the excess outflow, so F_m'·v_m ≤ 0 stays an outflow).
  // v_p is v_m in the groups (force, torque) F_m is non-zero in: the port's own directions,
  // so a light axis the channel carries nothing along is not damped (it would ring).
  // With |v_p|² ≤ 1e-12 nothing can be dissipated and F_m is returned unchanged. If v_m or
  // F_m is not finite, or dt is not a finite positive number, returns zero and ignores the
  // whole sample (remote_in included); the commit() that follows then accounts nothing.
  // Accounts no energy yet: the caller may clamp the wrench it actually renders and passes
  // that to commit().
  Vector6 control(const Vector6& v_m, const Vector6& F_m, double remote_in, double dt) noexcept;
  // The same observer, a controller that only ever lowers the wrench: F_m' = c F_m with
  // c ∈ [0, 1] the largest that keeps `observed` ≥ 0. For a hand whose rendered wrench is
  // clamped: the damping of control() may exceed the clamp and be cut, and the energy it
  // was to remove then leaves the channel; c F_m is never cut further than F_m. Use one of
  // control() and control_scaled() per sample, then commit().
  Vector6 control_scaled(const Vector6& v_m, const Vector6& F_m, double remote_in,
                         double dt) noexcept;
  // Accounts the wrench actually rendered (same units and axes as F_m, after any clamp) for
  // the v_m and dt of the last control(): P = F·v; P > 0 adds to `in`, P < 0 to `out`; the
  // PC's dissipation from that control() is added to `dissipated`. Non-finite input or an
  // invalid dt accounts nothing.
  void commit(const Vector6& v_m, const Vector6& F_rendered, double dt) noexcept;

  const PortEnergies& energies() const noexcept { return energies_; }

 private:
  PortEnergies energies_;
  double remote_in_ = 0.0;
  double pending_dissipation_ = 0.0;
};

// Drift compensation of the slave's admittance PC.
struct DriftCompensation {
  double time_constant = 0.5;  // [s] drift removed at |drift|/τ when energy allows; (0, 100]
  double energy_share = 0.5;   // fraction of the observed surplus one cycle may spend; (0, 1]
  double max_speed_translation = 0.05;  // [m/s] cap on the compensation velocity; ≥ 0
  double max_speed_rotation = 0.2;      // [rad/s] cap on the compensation velocity; ≥ 0
};
// Throws std::invalid_argument naming the field, its value and the allowed range, e.g.
// "drift_compensation.time_constant = 0: must be in (0, 100] s".
void validate(const DriftCompensation& drift);

// Remote side of the TDPA channel. Its port receives a velocity from the channel, so its PC
// is of admittance type: it takes velocity off along the measured wrench.
class SlavePassivity {
 public:
  explicit SlavePassivity(const DriftCompensation& drift = {});  // validates

  void reset() noexcept;  // energies and drift to zero

  // One control cycle. v_sd: the velocity the channel delivered (sum of the applied
  // increments / dt); F_s: the wrench the robot applies now; ground_in: the newest
  // cumulative master `in` received (delayed; monotone — smaller or non-finite values are
  // ignored); dt > 0 [s]. Returns the velocity to apply:
  //   v_pc = v_sd − β F_s, β ≥ 0 the smallest that keeps `observed` ≥ 0 (|F_s|² > 1e-12),
  //   v    = v_pc + v_dc, v_dc = drift/τ capped per translation/rotation norm and, if it
  //          draws power (F_s·v_dc > 0), scaled to at most energy_share of the surplus
  //          ground_in − out left after the PC.
  // Accounts energy with the returned velocity (P = F_s·v; P > 0 adds to `out`, P < 0 to
  // `in`); no separate commit. If v_sd or F_s is not finite, or dt is not a finite positive
  // number, returns zero and ignores the whole cycle (ground_in included).
  Vector6 step(const Vector6& v_sd, const Vector6& F_s, double ground_in, double dt) noexcept;
  // The observer alone (the `none` method, or while the operator is disabled): accounts
  // v_sd as delivered, changes nothing and returns v_sd (zero for non-finite input).
  Vector6 observe(const Vector6& v_sd, const Vector6& F_s, double ground_in, double dt) noexcept;
  // Drops the drift: after the operator re-indexed the hand there is no position to return to.
  void forget_drift() noexcept { drift_.setZero(); }

  const PortEnergies& energies() const noexcept { return energies_; }
  // Σ (v_sd − v_applied) dt [m, rad]: the master's position minus the slave's, as far as
  // the channel is concerned.
  const Vector6& drift() const noexcept { return drift_; }
  const DriftCompensation& drift_compensation() const noexcept { return config_; }

 private:
  DriftCompensation config_;
  PortEnergies energies_;
  Vector6 drift_ = Vector6::Zero();
  double ground_in_ = 0.0;
};

// Wave impedance per row: rows 0-2 use `translation` [N·s/m], rows 3-5 `rotation`
// [N·m·s/rad]. Both must be > 0 and finite (the default-constructed value is invalid).
struct WaveImpedance {
  double translation = 0.0;
  double rotation = 0.0;
  // [Hz] first-order low-pass on every wave as it is received, 0 = none. A wave is
  // reflected in full at a port that does not match b (a hand that hardly feels the scaled
  // wrench, a slave behind a wrench filter), and the reflections ring; filtering the wave
  // variables — not the forces — damps them and keeps the channel passive (Niemeyer and
  // Slotine, wave filtering). In [0, 1000].
  double filter_hz = 2.0;
};
// Throws std::invalid_argument, e.g. "wave_impedance.translation = -1: must be > 0 and
// finite (N·s/m)".
void validate(const WaveImpedance& b);

// Ground side of a wave-variable channel.
class WaveMaster {
 public:
  explicit WaveMaster(const WaveImpedance& b);  // validates

  void reset() noexcept;  // outputs and energies to zero

  // w_m: the newest returning wave received (delayed w_s, held between arrivals); v_m: the
  // operator's velocity. Sets F_m = b v_m − √(2b) w_m and u_m = √(2b) v_m − w_m per row,
  // and accounts P_m = F_m·v_m like MasterPassivity (observer only: `dissipated` stays 0).
  // Non-finite input or an invalid dt sets both outputs to zero and accounts nothing.
  void step(const Vector6& v_m, const Vector6& w_m, double dt) noexcept;
  // The newest cumulative slave `in` received (monotone), for `observed` only.
  void set_remote_in(double remote_in) noexcept;

  const Vector6& force() const noexcept { return force_; }                // F_m to display
  const Vector6& forward_wave() const noexcept { return forward_wave_; }  // u_m to send
  const PortEnergies& energies() const noexcept { return energies_; }

 private:
  Vector6 b_;
  Vector6 sqrt_2b_;
  Vector6 force_ = Vector6::Zero();
  Vector6 forward_wave_ = Vector6::Zero();
  Vector6 filtered_ = Vector6::Zero();  // w_m after the wave filter
  double filter_hz_ = 0.0;
  PortEnergies energies_;
  double remote_in_ = 0.0;
};

// Remote side of a wave-variable channel.
class WaveSlave {
 public:
  explicit WaveSlave(const WaveImpedance& b);  // validates

  void reset() noexcept;  // outputs and energies to zero

  // u_s: the newest forward wave received (delayed u_m, held between arrivals); F_s: the
  // measured wrench the robot applies; ground_in: the newest cumulative master `in`
  // (monotone, for `observed` only). Sets v_s = (√(2b) u_s − F_s)/b and
  // w_s = u_s − √(2/b) F_s per row, and accounts P_s = F_s·v_s like SlavePassivity
  // (observer only: `dissipated` stays 0). Non-finite u_s/F_s or an invalid dt sets both
  // outputs to zero and accounts nothing.
  void step(const Vector6& u_s, const Vector6& F_s, double ground_in, double dt) noexcept;

  const Vector6& velocity() const noexcept { return velocity_; }        // v_s to apply
  const Vector6& return_wave() const noexcept { return return_wave_; }  // w_s to send back
  const PortEnergies& energies() const noexcept { return energies_; }

 private:
  Vector6 b_;
  Vector6 sqrt_2b_;
  Vector6 sqrt_2_over_b_;
  Vector6 velocity_ = Vector6::Zero();
  Vector6 return_wave_ = Vector6::Zero();
  PortEnergies energies_;
  double ground_in_ = 0.0;
  Vector6 filtered_ = Vector6::Zero();  // u_s after the wave filter
  double filter_hz_ = 0.0;
};

}  // namespace tether
