# The seed pictures (remote_site/tools/src/seed, tether::tools): the runs behind the pictures
# without a scenario test of their own, and the command that writes every picture. Included
# from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(seed_pictures_test SOURCES remote/seed/seed_pictures_test.cc LIBS tether::tools)

# deploy/seed-pictures.sh (tether-seed-pictures into a fresh directory) runs in CI, and checks
# that every picture was written as a PNG of reasonable size, so docs/seeds.md's command and its
# pictures cannot rot.
add_test(NAME SeedPictures.smoke
         COMMAND bash ${PROJECT_SOURCE_DIR}/deploy/seed-pictures.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/seed-pictures-smoke)
set_tests_properties(SeedPictures.smoke PROPERTIES TIMEOUT 300
  ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common"
  PASS_REGULAR_EXPRESSION "PASS seed pictures: 9 written")
