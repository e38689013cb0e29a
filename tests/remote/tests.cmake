# Remote-site units: impedance law, position-type and teleoperation behaviours, bounds and
# the loop's lock-free hand-offs. (The other behaviours register in behaviours/tests.cmake,
# the simulated arm in arm/tests.cmake.)
tether_add_test(impedance_law_test SOURCES remote/impedance/impedance_law_test.cc
                LIBS tether::control)
tether_add_test(motion_reference_test SOURCES remote/impedance/motion_reference_test.cc
                LIBS tether::control)
tether_add_test(trajectory_test SOURCES remote/behaviours/trajectory_test.cc LIBS tether::control)
tether_add_test(teleoperation_test SOURCES remote/behaviours/teleoperation_test.cc
                LIBS tether::control)
tether_add_test(bounds_monitor_test SOURCES remote/bounds/bounds_monitor_test.cc
                LIBS tether::control)
tether_add_test(controlled_stop_test SOURCES remote/bounds/controlled_stop_test.cc
                LIBS tether::control)
tether_add_test(lock_free_test SOURCES remote/loop/lock_free_test.cc LIBS tether::control)
tether_add_test(executor_test SOURCES remote/loop/executor_test.cc LIBS tether::control)
target_include_directories(executor_test PRIVATE remote/loop)
tether_add_test(executor_allocation_test
                SOURCES remote/loop/executor_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::control)
target_include_directories(executor_allocation_test PRIVATE support remote/loop)
