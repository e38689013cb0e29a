# The arm link (remote_site/arm_link): the UDP protocol, the remote site's UdpArm
# driver, the simulated-arm server, and tether-simarm as a separate process.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(arm_link_protocol_test SOURCES remote/arm_link/protocol_test.cc
                LIBS tether::arm_link tether::sim)

# The in-test UDP peers use standalone Asio directly.
tether_add_test(udp_arm_test SOURCES remote/arm_link/udp_arm_test.cc LIBS tether::arm_link tether::sim)
tether_add_test(simarm_server_test SOURCES remote/arm_link/simarm_server_test.cc
                LIBS tether::arm_link tether::sim)
tether_add_test(udp_arm_allocation_test
                SOURCES remote/arm_link/udp_arm_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::arm_link tether::sim)
target_include_directories(udp_arm_allocation_test PRIVATE support)

# Real processes in real time: run alone, so parallel tests do not pause either end.
add_executable(simarm_process_test remote/arm_link/simarm_process_test.cc)
tether_test_code_defaults(simarm_process_test)
target_link_libraries(simarm_process_test PRIVATE tether::arm_link tether::sim tether::proto GTest::gtest
                                                  GTest::gtest_main)
add_dependencies(simarm_process_test tether-simarm)
target_include_directories(simarm_process_test PRIVATE support)
target_compile_definitions(simarm_process_test PRIVATE
  TETHER_SIMARM_BINARY="$<TARGET_FILE:tether-simarm>"
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
gtest_discover_tests(simarm_process_test DISCOVERY_TIMEOUT 60
                     PROPERTIES RUN_SERIAL TRUE
                                ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common")

foreach(test udp_arm_test simarm_server_test udp_arm_allocation_test simarm_process_test)
  target_include_directories(${test} SYSTEM PRIVATE ${ASIO_INCLUDE_DIR})
endforeach()

# The arm link across the emulated network (tether::linkem): loss, outages, duplicates and
# reordering. Real time: run alone.
tether_add_test(arm_link_through_emulator_test SERIAL
                SOURCES remote/arm_link/arm_link_through_emulator_test.cc
                LIBS tether::arm_link tether::sim tether::linkem tether::control)
