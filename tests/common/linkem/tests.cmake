# The link emulator (common/linkem): its own measured delay, jitter, bandwidth, stalls and
# cuts through an echo server, and its scripts. Real time: run alone.
tether_add_test(link_emulator_test SERIAL SOURCES common/linkem/link_emulator_test.cc
                LIBS tether::linkem)
target_include_directories(link_emulator_test SYSTEM PRIVATE ${ASIO_INCLUDE_DIR})
target_compile_definitions(link_emulator_test PRIVATE ASIO_STANDALONE ASIO_NO_DEPRECATED)
tether_add_test(link_script_test SOURCES common/linkem/link_script_test.cc LIBS tether::linkem)
# The packet link's impairment model in virtual time, its scripts and parsers (no root).
tether_add_test(packet_impairment_test SOURCES common/linkem/packet_impairment_test.cc
                LIBS tether::linkem)
# The packet link between two network namespaces, measured with UDP and TCP from inside
# them. Needs root (skips without); real time: run alone.
tether_add_test(packet_link_test SERIAL SOURCES common/linkem/packet_link_test.cc
                LIBS tether::linkem)
