# The operator console (local_site/src/console, local_site/apps). Included from
# tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(console_preview_test SOURCES local/console/preview_test.cc
                LIBS tether::local tether::proto)
target_compile_definitions(console_preview_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks"
  TETHER_CONSOLE_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/local/console")

tether_add_test(console_recording_test SOURCES local/console/recording_test.cc
                LIBS tether::local)

# Runs the `tether` binary itself: arguments, help and exit codes.
tether_add_test(console_cli_test SOURCES local/console/cli_test.cc LIBS tether::local)
add_dependencies(console_cli_test tether)
target_compile_definitions(console_cli_test PRIVATE
  TETHER_CONSOLE="$<TARGET_FILE:tether>"
  TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# An operator's session with the console against a real `tether-remote --serve` (door scene,
# real-time loop): connect, upload, list, start, record, plot, stop, status, reset.
tether_add_test(console_end_to_end_test NEEDS_PKI SOURCES local/console/end_to_end_test.cc
                LIBS tether::local)
add_dependencies(console_end_to_end_test tether tether-remote tether-simarm)
target_include_directories(console_end_to_end_test PRIVATE support)
target_compile_definitions(console_end_to_end_test PRIVATE
  TETHER_CONSOLE="$<TARGET_FILE:tether>"
  TETHER_REMOTE_BIN="$<TARGET_FILE:tether-remote>"
  TETHER_SIMARM_BIN="$<TARGET_FILE:tether-simarm>"
  TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# `tether replay`: a lock-step run of the site's loop on the simulated door, replayed.
tether_add_test(console_replay_test SOURCES local/console/replay_test.cc
                LIBS tether::local tether::proto tether::control tether::sim)
target_compile_definitions(console_replay_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
