# The teleoperation data plane's datagrams (common/datagram): codec, sealing and replay
# window, session keys' text and the receiver's loss concealment, all in memory.
tether_add_test(teleop_datagram_test SOURCES common/datagram/teleop_datagram_test.cc
                LIBS tether::datagram)
tether_add_test(video_datagram_test SOURCES common/datagram/video_datagram_test.cc LIBS tether::datagram)
