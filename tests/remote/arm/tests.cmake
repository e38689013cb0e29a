# The simulated arm (remote_site/sim): scene set-up, MJCF generation, the simulation.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.

tether_add_test(scene_test SOURCES remote/arm/scene_test.cc LIBS tether::sim)

# Tests the private MJCF builder against MuJoCo's compiler directly.
tether_add_test(mjcf_builder_test SOURCES remote/arm/mjcf_builder_test.cc
                LIBS tether::sim mujoco::mujoco)
target_include_directories(mjcf_builder_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/sim/src)

tether_add_test(simulated_arm_test SOURCES remote/arm/simulated_arm_test.cc LIBS tether::sim
                tether::vision)
# The render threads' RGB-to-grey conversion (offscreen_renderer.h), for the detector.
target_include_directories(simulated_arm_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/sim/src)
tether_add_test(simulated_door_test SOURCES remote/arm/simulated_door_test.cc LIBS tether::sim)

tether_add_test(simulated_arm_allocation_test
                SOURCES remote/arm/simulated_arm_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::sim)
target_include_directories(simulated_arm_allocation_test PRIVATE support)
