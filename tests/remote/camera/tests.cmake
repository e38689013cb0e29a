# The cameras' video (remote_site/camera): VP9 encoding and decoding.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.

tether_add_test(video_codec_test SOURCES remote/camera/video_codec_test.cc
                LIBS tether::camera tether::vision)
