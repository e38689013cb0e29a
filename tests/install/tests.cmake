# The exported package works for an integrator: install tether into a scratch prefix, build
# an out-of-tree project with find_package(tether) against it, and run it.
add_test(NAME InstalledPackage.AnOutOfTreeArmDriverBuildsAndTracksATrajectory
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/build_consumer.sh
                 ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_check
                 ${CMAKE_CURRENT_SOURCE_DIR}/install/consumer)
set_tests_properties(InstalledPackage.AnOutOfTreeArmDriverBuildsAndTracksATrajectory
  PROPERTIES TIMEOUT 600 PASS_REGULAR_EXPRESSION "MOTION origin rose 30.0")
