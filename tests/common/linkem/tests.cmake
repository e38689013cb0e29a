# The link emulator (common/linkem): its own measured delay, jitter, bandwidth, stalls and
# cuts through an echo server, and its scripts. Real time: run alone.
tether_add_test(link_emulator_test SERIAL SOURCES common/linkem/link_emulator_test.cc
                LIBS tether::linkem)
target_include_directories(link_emulator_test SYSTEM PRIVATE ${ASIO_INCLUDE_DIR})
target_compile_definitions(link_emulator_test PRIVATE ASIO_STANDALONE ASIO_NO_DEPRECATED)
tether_add_test(link_script_test SOURCES common/linkem/link_script_test.cc LIBS tether::linkem)
