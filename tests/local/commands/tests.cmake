# Task commands (local_site/commands, local_site/src/commands, `tether do`). Included from
# tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(task_command_test SOURCES local/commands/task_command_test.cc
                LIBS tether::local tether::proto)
target_compile_definitions(task_command_test PRIVATE
  TETHER_COMMANDS_DIR="${PROJECT_SOURCE_DIR}/local_site/commands"
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

# Runs the `tether` binary itself: `tether do` with the shipped commands and with broken ones.
tether_add_test(console_do_test SOURCES local/commands/console_do_test.cc LIBS tether::local)
add_dependencies(console_do_test tether)
target_include_directories(console_do_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/local/console)
target_compile_definitions(console_do_test PRIVATE
  TETHER_CONSOLE="$<TARGET_FILE:tether>"
  TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
