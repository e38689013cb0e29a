# Behaviour units of the remote-site executor (the extended-task-space patent). Sources are relative to tests/
# (this file is include()d from tests/CMakeLists.txt).
foreach(behaviour joint_limit_avoidance singularity_avoidance singularity_robustness dither
                  proximity manipulability visual_tracking)
  tether_add_test(${behaviour}_test SOURCES remote/behaviours/${behaviour}_test.cc
                  LIBS tether::control)
endforeach()

tether_add_test(behaviour_allocation_test
                SOURCES remote/behaviours/behaviour_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::control)
target_include_directories(behaviour_allocation_test PRIVATE support)
