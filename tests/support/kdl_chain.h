#pragma once

// Builds an Orocos KDL chain straight from a URDF with urdfdom, independently of tether's
// own loader, so KDL can serve as the oracle for tether's kinematics (tests and
// benchmarks only; KDL is never linked into the product).

#include <kdl/chain.hpp>
#include <kdl/frames.hpp>
#include <string>

#include "tether/common/types.h"

namespace tether::testing {

KDL::Chain kdl_chain_from_urdf(const std::string& path, const std::string& base_link,
                               const std::string& tip_link);

Frame to_frame(const KDL::Frame& f);

}  // namespace tether::testing
