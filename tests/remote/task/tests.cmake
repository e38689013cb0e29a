tether_add_test(task_validation_test SOURCES remote/task/validation_test.cc LIBS tether::control)
tether_add_test(behaviour_list_test SOURCES remote/task/behaviour_list_test.cc LIBS tether::control)
