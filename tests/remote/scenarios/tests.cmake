# Scenario tests: whole tasks on the MuJoCo-simulated arm (batch pacing).
tether_add_test(door_experiment_test SOURCES remote/scenarios/door_experiment_test.cc
                LIBS tether::sim tether::proto)
target_compile_definitions(door_experiment_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

tether_add_test(visual_tracking_scenario_test SOURCES remote/scenarios/visual_tracking_scenario_test.cc
                LIBS tether::sim tether::proto)
target_compile_definitions(visual_tracking_scenario_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

tether_add_test(polishing_test SOURCES remote/scenarios/polishing_test.cc
                LIBS tether::sim tether::proto)
target_compile_definitions(polishing_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

# The shipped task files run through tether-remote exactly as docs/task-authoring.md shows, so they
# cannot rot: exit status 0 = ran without a bound breach.
add_test(NAME TetherRemote.RunsDoorForceTask
         COMMAND tether-remote --batch --scene door --duration 2s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_force.textproto)
add_test(NAME TetherRemote.RunsDoorSpringTask
         COMMAND tether-remote --batch --scene door --duration 5s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_spring.textproto)
add_test(NAME TetherRemote.RunsDoorSharedTaskWithAScriptedHandController
         COMMAND tether-remote --batch --scene door --duration 2s --hand-controller rotate-x:15:1
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_shared.textproto)
# The seed's own 20 ms door tasks, on the simulated arm's default wrist compliance.
add_test(NAME TetherRemote.RunsDoorForceTaskAtTheSeeds20Ms
         COMMAND tether-remote --batch --scene door --duration 2s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_force_20ms.textproto)
add_test(NAME TetherRemote.RunsDoorSpringTaskAtTheSeeds20Ms
         COMMAND tether-remote --batch --scene door --duration 5s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_spring_20ms.textproto)
add_test(NAME TetherRemote.RunsDoorSharedTaskAtTheSeeds20Ms
         COMMAND tether-remote --batch --scene door --duration 2s --hand-controller rotate-x:15:1
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_shared_20ms.textproto)
# The wrist camera follows the moving target (the visual-target scene).
add_test(NAME TetherRemote.RunsVisualTrackingTask
         COMMAND tether-remote --batch --scene target --duration 4s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/visual_tracking.textproto)
# The polishing task presses the tip onto the wall, the hand held still (its stream a
# heartbeat; the raster is the scenario test's).
add_test(NAME TetherRemote.RunsPolishTask
         COMMAND tether-remote --batch --scene wall --duration 3s --hand-controller rotate-x:0:3
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/polish.textproto)
# A rigid grasp at 20 ms leaves the force bound (exit 3), which is why the wrist is compliant.
add_test(NAME TetherRemote.ARigidGraspAt20MsStopsOnTheForceBound
         COMMAND tether-remote --batch --scene door --duration 1s --wrist-stiffness rigid
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_force_20ms.textproto)
set_tests_properties(TetherRemote.ARigidGraspAt20MsStopsOnTheForceBound PROPERTIES
  PASS_REGULAR_EXPRESSION "stopped by +force [0-9.]+ N exceeds the bound 150 N")
add_test(NAME TetherRemote.RejectsABadWristStiffnessNamingItsRange
         COMMAND tether-remote --batch --scene door --duration 1s --wrist-stiffness 5000:0.5
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/door_force_20ms.textproto)
set_tests_properties(TetherRemote.RejectsABadWristStiffnessNamingItsRange PROPERTIES
  PASS_REGULAR_EXPRESSION "K_R \\[N·m/rad\\] = 0.5 is outside \\[1, 100000\\]")
add_test(NAME TetherRemote.RejectsAnInvalidTaskNamingTheField
         COMMAND tether-remote --validate --task ${PROJECT_SOURCE_DIR}/tests/remote/scenarios/bad_task.textproto)
set_tests_properties(TetherRemote.RejectsAnInvalidTaskNamingTheField PROPERTIES
  PASS_REGULAR_EXPRESSION "bad_task.textproto:3:65: impedance.mass.rotation.x = -2: must be finite and > 0")
set_tests_properties(TetherRemote.RunsDoorForceTask TetherRemote.RunsDoorSpringTask
  TetherRemote.RunsDoorSharedTaskWithAScriptedHandController
  TetherRemote.RejectsAnInvalidTaskNamingTheField TetherRemote.RunsDoorForceTaskAtTheSeeds20Ms
  TetherRemote.RunsDoorSpringTaskAtTheSeeds20Ms TetherRemote.RunsDoorSharedTaskAtTheSeeds20Ms
  TetherRemote.ARigidGraspAt20MsStopsOnTheForceBound TetherRemote.RunsVisualTrackingTask
  TetherRemote.RunsPolishTask
  TetherRemote.RejectsABadWristStiffnessNamingItsRange
  PROPERTIES ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common")

# A task that selects a non-default resolver (the constrained-optimisation patent) runs through tether-remote.
add_test(NAME TetherRemote.RunsAReachWithTheConstrainedOptimisationResolver
         COMMAND tether-remote --batch --scene free --duration 4s
                 --task ${PROJECT_SOURCE_DIR}/remote_site/tasks/reach_constrained_optimisation.textproto)
set_tests_properties(TetherRemote.RunsAReachWithTheConstrainedOptimisationResolver PROPERTIES
  ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common")
