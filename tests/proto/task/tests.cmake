tether_add_test(task_io_test SOURCES proto/task/task_io_test.cc LIBS tether::proto)
# The remote site's shipped task files are found in the source tree at test run time.
target_compile_definitions(task_io_test PRIVATE TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
tether_add_test(task_schema_test SOURCES proto/task/task_schema_test.cc
                LIBS tether::proto tether_task_schema)
target_compile_definitions(task_schema_test PRIVATE TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# The task author's reference (docs/task-reference.md) is what the .proto files' options and
# comments generate: a range changed on one side only fails here.
add_test(NAME TaskReference.PageIsCurrent
         COMMAND tether-task-schema --descriptors ${TETHER_TASK_SCHEMA_DESCRIPTORS}
                 --check ${PROJECT_SOURCE_DIR}/docs/task-reference.md)
