tether_add_test(task_validation_test SOURCES common/task/validation_test.cc LIBS tether::common)
