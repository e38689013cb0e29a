# The independent MCAP reader (tests/mcap_reader): Foxglove's @mcap/core with @mcap/support's
# decompressors and protobufjs, pinned in its package-lock.json, checks recordings tether's
# C++ writer makes (check-mcap.mjs). Included from tests/CMakeLists.txt.
# Its packages, installed once per test run (npm ci, skipped while the lock is unchanged):
# fixture mcap_reader. Needs node and npm, which the script installs with apt if missing.
add_test(NAME McapReader.install
         COMMAND bash ${PROJECT_SOURCE_DIR}/deploy/install-mcap-reader.sh)
set_tests_properties(McapReader.install PROPERTIES FIXTURES_SETUP mcap_reader TIMEOUT 300)
# The checker shown to pass and to fail: files written by @mcap/core's own writer, then
# damaged copies (a flipped chunk byte, a cut file, an undecodable message, wrong statistics,
# a wrong message index, broken CRCs), each expected to fail for its own reason.
add_test(NAME McapReader.selftest
         COMMAND node ${PROJECT_SOURCE_DIR}/tests/mcap_reader/selftest.mjs)
set_tests_properties(McapReader.selftest PROPERTIES FIXTURES_REQUIRED mcap_reader TIMEOUT 120)
