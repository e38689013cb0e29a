# The simulated arm (remote_site/src/arm): scene set-up, MJCF generation, the simulation.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
find_package(mujoco REQUIRED)

tether_add_test(scene_test SOURCES remote/arm/scene_test.cc LIBS tether::remote)

# Tests the private MJCF builder against MuJoCo's compiler directly.
tether_add_test(mjcf_builder_test SOURCES remote/arm/mjcf_builder_test.cc
                LIBS tether::remote mujoco::mujoco)
target_include_directories(mjcf_builder_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/src)

tether_add_test(simulated_arm_test SOURCES remote/arm/simulated_arm_test.cc LIBS tether::remote)
tether_add_test(simulated_door_test SOURCES remote/arm/simulated_door_test.cc LIBS tether::remote)

tether_add_test(simulated_arm_allocation_test
                SOURCES remote/arm/simulated_arm_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::remote)
target_include_directories(simulated_arm_allocation_test PRIVATE support)
