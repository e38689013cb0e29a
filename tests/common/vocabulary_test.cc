#include "tether/common/vocabulary.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tether {
namespace {

// Every enumerator from the first to `last` (the enumerations are dense from 0).
template <typename Enum>
std::vector<Enum> up_to(Enum last) {
  std::vector<Enum> all;
  for (int i = 0; i <= static_cast<int>(last); ++i) all.push_back(static_cast<Enum>(i));
  return all;
}

// Names every enumerator up to `last` distinctly and not "unknown", and has no name for the
// value after `last` — so `last` really is the last enumerator and the check saw them all.
template <typename Enum>
void expect_distinct_names(Enum last) {
  std::set<std::string> names;
  for (Enum e : up_to(last)) {
    const std::string name = to_string(e);
    EXPECT_FALSE(name.empty()) << static_cast<int>(e);
    EXPECT_NE(name, "unknown") << static_cast<int>(e);
    EXPECT_TRUE(names.insert(name).second) << "'" << name << "' names two enumerators";
  }
  EXPECT_STREQ(to_string(static_cast<Enum>(static_cast<int>(last) + 1)), "unknown")
      << "an enumerator after the one this test takes as the last";
}

TEST(Vocabulary, EveryEnumeratorHasItsOwnName) {
  expect_distinct_names(ExecutorState::kRecovering);
  expect_distinct_names(BreachCause::kInvalidIncrement);
  expect_distinct_names(ResolverKind::kShake);
}

TEST(Vocabulary, NamesAreTheOnesOperatorsRead) {
  EXPECT_STREQ(to_string(ExecutorState::kUnspecified), "unspecified");
  EXPECT_STREQ(to_string(ExecutorState::kStopping), "stopping");
  EXPECT_STREQ(to_string(BreachCause::kArmAngleDeviation), "arm-angle deviation");
  EXPECT_STREQ(to_string(BreachCause::kLoopOverrun), "control-loop overrun");
  EXPECT_STREQ(to_string(BreachCause::kTeleoperationStalled), "teleoperation stream stalled");
  EXPECT_STREQ(to_string(BreachCause::kJointLimitMargin), "joint-limit margin");
  EXPECT_STREQ(to_string(ResolverKind::kConstrainedOptimisation), "constrained optimisation");
}

TEST(Vocabulary, BreachUnitsFollowTheMeasuredQuantity) {
  EXPECT_STREQ(unit_of(BreachCause::kTranslationDeviation), "m");
  EXPECT_STREQ(unit_of(BreachCause::kArmAngleDeviation), "rad");
  EXPECT_STREQ(unit_of(BreachCause::kJointLimitMargin), "rad");
  EXPECT_STREQ(unit_of(BreachCause::kForce), "N");
  EXPECT_STREQ(unit_of(BreachCause::kTorque), "N·m");
  EXPECT_STREQ(unit_of(BreachCause::kTeleoperationStalled), "s");
  EXPECT_STREQ(unit_of(BreachCause::kVisualTargetLost), "s");
  EXPECT_STREQ(unit_of(BreachCause::kLoopOverrun), "cycles");
  // Causes without a measured value have no unit.
  for (BreachCause c : {BreachCause::kNone, BreachCause::kArmFault, BreachCause::kResolverSingular,
                        BreachCause::kNonFinite, BreachCause::kOperatorStop,
                        BreachCause::kDeadmanReleased, BreachCause::kGroundLinkLost}) {
    EXPECT_STREQ(unit_of(c), "") << to_string(c);
  }
}

}  // namespace
}  // namespace tether
