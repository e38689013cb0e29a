tether_add_test(task_io_test SOURCES proto/task/task_io_test.cc LIBS tether::proto)
# The remote site's shipped task files are found in the source tree at test run time.
target_compile_definitions(task_io_test PRIVATE TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
