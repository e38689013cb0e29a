tether_add_test(task_field_path_test SOURCES common/task/field_path_test.cc LIBS tether::common)
