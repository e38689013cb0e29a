// The camera link end to end on loopback: a CameraLinkServer serving a camera device, a
// site's NetworkCameras taking its catalogue, images and aims, and the refusals of a peer
// without the key or of another arm.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tether/common/urdf_loader.h"
#include "tether/remote/camera_link/camera_link_server.h"
#include "tether/remote/camera_link/network_cameras.h"
#include "tether/remote/camera_link/protocol.h"
#include "tether/remote/sim/simulated_arm.h"
#include "udp_peer.h"

namespace tether::remote::camera_link {
namespace {

using namespace std::chrono_literals;
using ::tether::remote::testing::other_key_file;
using ::tether::remote::testing::test_key_file;

constexpr std::uint64_t kArm = 0x1234;

// A scripted device: camera "fixed" (64×48) and "head" (on the pan-tilt mount), each image
// filled with its number's low byte, its pose turned by 0.01 rad per image about z.
class ScriptedCameras final : public camera::CameraDevices {
 public:
  ScriptedCameras() {
    scene_.name = "scripted";
    SceneCamera fixed;
    fixed.name = "fixed";
    fixed.width = 64;
    fixed.height = 48;
    fixed.frame_rate = 30.0;
    fixed.pose.p = Vector3(1.0, 0.0, 1.0);
    SceneCamera head = fixed;
    head.name = "head";
    head.mount = "camera_mount";
    scene_.cameras = {fixed, head};
  }
  const SceneDescription& scene() const { return scene_; }
  const std::vector<SceneCamera>& cameras() const override { return scene_.cameras; }

  std::unique_ptr<camera::CameraWatch> watch(const std::string& name,
                                             camera::ImageSink sink) override {
    const SceneCamera* cam = nullptr;
    for (const SceneCamera& c : scene_.cameras) {
      if (c.name == name) cam = &c;
    }
    if (cam == nullptr) throw std::invalid_argument("camera = '" + name + "': no such camera");
    auto stop = std::make_shared<std::atomic<bool>>(false);
    auto thread = std::make_shared<std::thread>([cam, stop, sink = std::move(sink)] {
      std::vector<std::uint8_t> rgb(std::size_t(cam->width) * cam->height * 3);
      for (std::uint64_t n = 1; !stop->load(); ++n) {
        std::fill(rgb.begin(), rgb.end(), static_cast<std::uint8_t>(n));
        camera::CameraImage image;
        image.camera = cam;
        image.number = n;
        image.arm_time = 0.1 * static_cast<double>(n);
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        image.capture_ns = ts.tv_sec * 1'000'000'000LL + ts.tv_nsec - 3'000'000;  // 3 ms ago
        image.width = cam->width;
        image.height = cam->height;
        image.rgb = rgb;
        image.pose_known = true;
        image.base_T_camera.R =
            Eigen::AngleAxisd(0.01 * static_cast<double>(n), Vector3::UnitZ()).toRotationMatrix();
        image.base_T_camera.p = cam->pose.p;
        sink(image);
        std::this_thread::sleep_for(33ms);
      }
    });
    watches.fetch_add(1);
    return std::make_unique<camera::CameraWatch>([stop, thread] {
      stop->store(true);
      thread->join();
    });
  }

  std::string aim(const std::string& name, double pan, double tilt) override {
    if (name != "head") return "camera '" + name + "' is not on the pan-tilt head";
    last_pan = pan;
    last_tilt = tilt;
    return {};
  }

  std::atomic<int> watches{0};
  std::atomic<double> last_pan{0.0}, last_tilt{0.0};

 private:
  SceneDescription scene_;
};

class CameraLinkTest : public ::testing::Test {
 protected:
  CameraLinkTest() {
    CameraLinkServerOptions o;
    o.key_file = test_key_file();
    o.arm_model = kArm;
    server_ = std::make_unique<CameraLinkServer>(device_, device_.scene(), o);
    server_->start();
  }
  NetworkCamerasOptions site_options() const {
    NetworkCamerasOptions o;
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.key_file = test_key_file();
    o.arm_model = kArm;
    o.connect_timeout = 2.0;
    return o;
  }

  ScriptedCameras device_;
  std::unique_ptr<CameraLinkServer> server_;
};

// Collects what a watch delivers.
struct Received {
  std::mutex mutex;
  std::condition_variable more;
  std::vector<camera::CameraImage> images;  // rgb not kept
  std::vector<std::uint8_t> first_pixels;
  std::int64_t worst_age_ns = 0;
  camera::ImageSink sink() {
    return [this](const camera::CameraImage& image) {
      timespec ts{};
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const std::lock_guard<std::mutex> lock(mutex);
      worst_age_ns = std::max<std::int64_t>(
          worst_age_ns, ts.tv_sec * 1'000'000'000LL + ts.tv_nsec - image.capture_ns);
      camera::CameraImage kept = image;
      if (images.empty()) first_pixels.assign(image.rgb.begin(), image.rgb.end());
      kept.rgb = {};
      images.push_back(kept);
      more.notify_all();
    };
  }
  bool wait_for(std::size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    return more.wait_for(lock, timeout, [&] { return images.size() >= count; });
  }
};

TEST_F(CameraLinkTest, TheSiteTakesTheSceneAndItsCamerasFromTheCatalogue) {
  NetworkCameras site(site_options());
  EXPECT_EQ(site.scene(), device_.scene());
  ASSERT_EQ(site.cameras().size(), 2u);
  EXPECT_EQ(site.cameras()[1].mount, "camera_mount");
}

TEST_F(CameraLinkTest, WatchedImagesArriveWithTheirPixelsPoseAndCaptureTime) {
  NetworkCameras site(site_options());
  Received got;
  {
    const auto watch = site.watch("fixed", got.sink());
    ASSERT_TRUE(got.wait_for(5, 3s)) << got.images.size() << " images";
  }
  const std::size_t after_stop = got.images.size();
  std::this_thread::sleep_for(150ms);
  const std::lock_guard<std::mutex> lock(got.mutex);
  EXPECT_EQ(got.images.size(), after_stop) << "images after the watch ended";
  for (std::size_t i = 1; i < got.images.size(); ++i) {
    EXPECT_GT(got.images[i].number, got.images[i - 1].number);
  }
  const camera::CameraImage& first = got.images.front();
  EXPECT_EQ(first.camera->name, "fixed");
  EXPECT_EQ(first.width, 64);
  EXPECT_EQ(first.height, 48);
  EXPECT_DOUBLE_EQ(first.arm_time, 0.1 * static_cast<double>(first.number));
  ASSERT_TRUE(first.pose_known);
  EXPECT_NEAR(Eigen::AngleAxisd(first.base_T_camera.R).angle(),
              0.01 * static_cast<double>(first.number), 1e-12);
  ASSERT_EQ(got.first_pixels.size(), 64u * 48u * 3u);
  EXPECT_EQ(got.first_pixels[100], static_cast<std::uint8_t>(first.number));
  // Taken 3 ms before the device handed it over: the site's capture time is at least that
  // old on arrival, and loopback adds little.
  EXPECT_GE(got.worst_age_ns, 3'000'000);
  EXPECT_LT(got.worst_age_ns, 500'000'000);
  EXPECT_EQ(site.statistics().streams_lost, 0u);
}

TEST_F(CameraLinkTest, AnAimReachesTheHeadAndARefusalComesBackAsTheDeviceSaidIt) {
  NetworkCameras site(site_options());
  EXPECT_EQ(site.aim("head", 0.25, -0.125), "");
  EXPECT_EQ(device_.last_pan.load(), 0.25);
  EXPECT_EQ(device_.last_tilt.load(), -0.125);
  EXPECT_EQ(site.aim("fixed", 0.1, 0.0), "camera 'fixed' is not on the pan-tilt head");
  EXPECT_EQ(server_->statistics().aims, 2u);
}

TEST_F(CameraLinkTest, AnUnknownCameraIsRefusedByNameBeforeAnythingIsAsked) {
  NetworkCameras site(site_options());
  Received got;
  try {
    site.watch("nowhere", got.sink());
    FAIL() << "watched a camera that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "camera 'nowhere': no such camera at camera server 127.0.0.1:" +
                  std::to_string(server_->port()));
  }
  EXPECT_EQ(device_.watches.load(), 0);
}

TEST_F(CameraLinkTest, ASiteWithAnotherKeyIsToldSoAndGetsNothing) {
  NetworkCamerasOptions o = site_options();
  o.key_file = other_key_file();
  try {
    NetworkCameras site(o);
    FAIL() << "took a catalogue with another key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("WELCOME does not verify: it holds another arm-link key than " +
                                   other_key_file()),
        std::string::npos)
        << e.what();
  }
  EXPECT_EQ(device_.watches.load(), 0);
}

TEST_F(CameraLinkTest, ASiteOfAnotherArmIsToldBothIds) {
  NetworkCamerasOptions o = site_options();
  o.arm_model = 0x99;
  try {
    NetworkCameras site(o);
    FAIL() << "took a catalogue for another arm";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("its arm model id is 0000000000001234, this site's arm is "
                                         "0000000000000099"),
              std::string::npos)
        << e.what();
  }
}

// A peer that never held the key: it reads WELCOME, cannot check it, and asks to watch with
// a MAC it cannot make. The server refuses it without starting the camera.
TEST_F(CameraLinkTest, AWatchWithoutAValidMacStartsNoCameraAndEndsTheConnection) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(server_->port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const std::vector<std::uint8_t> hello =
      encode_frame(Kind::kHello, 1, encode_hello(Hello{make_nonce(), kArm}), arm_link::LinkKey{});
  ASSERT_EQ(::send(fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  std::vector<std::uint8_t> welcome(kHeaderSize + kHelloSize + kMacSize);
  ASSERT_EQ(::recv(fd, welcome.data(), welcome.size(), MSG_WAITALL),
            static_cast<ssize_t>(welcome.size()));
  const std::string name = "fixed";
  const std::vector<std::uint8_t> watch = encode_frame(
      Kind::kWatch, 2, std::vector<std::uint8_t>(name.begin(), name.end()), arm_link::LinkKey{});
  ASSERT_EQ(::send(fd, watch.data(), watch.size(), 0), static_cast<ssize_t>(watch.size()));
  std::uint8_t byte = 0;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the server answered instead of closing";
  ::close(fd);
  EXPECT_EQ(device_.watches.load(), 0);
  EXPECT_EQ(server_->statistics().refused, 1u);
  EXPECT_EQ(server_->statistics().images_sent, 0u);
}

TEST_F(CameraLinkTest, StoppingTheServerEndsAWatchAndTheSiteCountsTheLostStream) {
  NetworkCameras site(site_options());
  Received got;
  const auto watch = site.watch("head", got.sink());
  ASSERT_TRUE(got.wait_for(2, 3s));
  server_->stop();
  for (int i = 0; i < 100 && site.statistics().streams_lost == 0; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(site.statistics().streams_lost, 1u);
}

// The simulated cell's own cameras, rendered by MuJoCo, through the link as tether-simarm
// serves them.
TEST(CameraLinkSimulation, TheDoorScenesOverviewCameraArrivesRenderedWithItsPose) {
  SimulationOptions sim;
  sim.scene = SceneKind::kDoor;
  const ArmModel model = load_default_arm();
  SimulatedArm arm(model, sim);
  CameraLinkServerOptions o;
  o.key_file = test_key_file();
  o.arm_model = kArm;
  CameraLinkServer server(arm, arm.scene_description(), o);
  server.start();
  NetworkCamerasOptions s;
  s.host = "127.0.0.1";
  s.port = server.port();
  s.key_file = test_key_file();
  s.arm_model = kArm;
  NetworkCameras site(s);
  // The catalogue is the scene as the site reports it (through tether.v1, as WatchCamera's
  // clients see it): the same bodies and cameras.
  ASSERT_EQ(site.scene().bodies.size(), arm.scene_description().bodies.size());
  ASSERT_EQ(site.cameras().size(), arm.scene_description().cameras.size());
  for (std::size_t i = 0; i < site.cameras().size(); ++i) {
    EXPECT_EQ(site.cameras()[i].name, arm.scene_description().cameras[i].name);
  }
  // The simulation takes its images as its physics advances (tether-simarm's servo loop
  // does it there): 1 ms of arm time per millisecond.
  std::atomic<bool> stop{false};
  std::thread physics([&] {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 1; !stop.load(); ++k) {
      arm.advance_to(0.001 * k);
      std::this_thread::sleep_until(start + k * 1ms);
    }
  });
  Received got;
  {
    const auto watch = site.watch("overview", got.sink());
    const bool arrived = got.wait_for(3, 10s);
    stop.store(true);
    physics.join();
    ASSERT_TRUE(arrived) << got.images.size() << " images";
  }
  const std::lock_guard<std::mutex> lock(got.mutex);
  EXPECT_EQ(got.images.front().width, 640);
  EXPECT_TRUE(got.images.front().pose_known);
  // A rendered cell, not a blank frame: the picture has contrast.
  const auto [lo, hi] = std::minmax_element(got.first_pixels.begin(), got.first_pixels.end());
  EXPECT_GT(*hi - *lo, 100);
  const SceneCamera& overview = *got.images.front().camera;
  EXPECT_TRUE(got.images.front().base_T_camera.p.isApprox(overview.pose.p, 1e-6));
}

}  // namespace
}  // namespace tether::remote::camera_link
