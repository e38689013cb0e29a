# What the site's cameras see (remote_site/vision): AprilTag detection and pose.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.

tether_add_test(tag_detector_test SOURCES remote/vision/tag_detector_test.cc LIBS tether::vision)
