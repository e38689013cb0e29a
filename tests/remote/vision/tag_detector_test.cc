// AprilTag detection and pose against images whose truth is known: a tag36h11 tag rendered
// here by ray casting through a pinhole camera at a chosen pose (4 × 4 samples a pixel, with
// seeded noise), so the pose the detector gives can be compared with the one that made it.

#include "tether/remote/vision/tag_detector.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tether::remote::vision {
namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

struct Scene {
  CameraIntrinsics camera = CameraIntrinsics::from_field_of_view(640, 480, 60.0 * kDeg);
  Frame camera_T_tag;     // tag frame: x right, y down on the printed tag, z into it
  double tag_size = 0.1;  // [m] black square
  int id = 0;
  double noise = 2.0;  // [grey levels] standard deviation
  std::uint64_t seed = 20261128;
};

// Grey image of the scene: the tag (with its white margin) on a mid-grey background.
std::vector<std::uint8_t> render(const Scene& s) {
  const CameraIntrinsics& c = s.camera;
  const std::vector<std::uint8_t> tag = tag36h11_image(s.id, 1);
  const double cell = s.tag_size / kTag36h11BlackCells;
  const double half = 0.5 * cell * kTag36h11Cells;
  const Frame tag_T_camera = s.camera_T_tag.inverse();
  std::vector<std::uint8_t> image(static_cast<std::size_t>(c.width) * c.height);
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> noise(0.0, s.noise);
  for (int v = 0; v < c.height; ++v) {
    for (int u = 0; u < c.width; ++u) {
      double sum = 0.0;
      for (int k = 0; k < 16; ++k) {
        const int sub_u = k % 4;  // 4 × 4 samples
        const int sub_v = k / 4;
        const double x = u + (sub_u + 0.5) / 4.0;
        const double y = v + (sub_v + 0.5) / 4.0;
        // The ray through (x, y), in tag coordinates, meets the tag's plane z = 0.
        const Vector3 direction = tag_T_camera.R * Vector3((x - c.cx) / c.fx, (y - c.cy) / c.fy, 1);
        const Vector3& origin = tag_T_camera.p;
        double grey = 128.0;
        if (std::abs(direction.z()) > 1e-12) {
          const double t = -origin.z() / direction.z();
          const Vector3 hit = origin + t * direction;
          if (t > 0.0 && std::abs(hit.x()) < half && std::abs(hit.y()) < half) {
            const int col = static_cast<int>((hit.x() + half) / cell);
            const int row = static_cast<int>((hit.y() + half) / cell);
            const auto r = static_cast<std::size_t>(std::min(row, 9));
            const auto c = static_cast<std::size_t>(std::min(col, 9));
            grey = tag[r * kTag36h11Cells + c];
          }
        }
        sum += grey;
      }
      image[static_cast<std::size_t>(v) * c.width + u] =
          static_cast<std::uint8_t>(std::clamp(sum / 16.0 + noise(rng), 0.0, 255.0));
    }
  }
  return image;
}

GrayImage view(const std::vector<std::uint8_t>& pixels, const CameraIntrinsics& c) {
  return GrayImage{pixels.data(), c.width, c.height, c.width};
}

double angle_between(const Matrix3& a, const Matrix3& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

TEST(TagDetector, GivesTheCentreOfATagFaceOnWithinHalfAMillimetre) {
  Scene s;
  s.camera_T_tag.p = Vector3(0.01, -0.02, 0.3);
  const std::vector<std::uint8_t> image = render(s);
  TagDetector detector;
  const std::optional<TagDetection> found = detector.find(view(image, s.camera), s.camera, 0.1, 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_LT((found->camera_T_tag.p - s.camera_T_tag.p).norm(), 0.0005)
      << found->camera_T_tag.p.transpose();
  EXPECT_LT(angle_between(found->camera_T_tag.R, s.camera_T_tag.R), 2.0 * kDeg);
  EXPECT_EQ(found->hamming, 0);
  EXPECT_GT(found->decision_margin, 50.0);
  EXPECT_GT(detector.last_detection_time(), 0.0);
  // The centre projects where the pose says.
  const Vector3 p = found->camera_T_tag.p;
  EXPECT_NEAR(found->center.x(), s.camera.fx * p.x() / p.z() + s.camera.cx, 0.5);
  EXPECT_NEAR(found->center.y(), s.camera.fy * p.y() / p.z() + s.camera.cy, 0.5);
}

TEST(TagDetector, GivesThePoseOfATiltedTagWithinAMillimetreAndADegree) {
  Scene s;
  s.id = 42;
  s.camera_T_tag.R = (Eigen::AngleAxisd(30.0 * kDeg, Vector3::UnitY()) *
                      Eigen::AngleAxisd(-15.0 * kDeg, Vector3::UnitX()) *
                      Eigen::AngleAxisd(20.0 * kDeg, Vector3::UnitZ()))
                         .toRotationMatrix();
  s.camera_T_tag.p = Vector3(0.03, 0.02, 0.4);
  const std::vector<std::uint8_t> image = render(s);
  TagDetector detector;
  const std::optional<TagDetection> found = detector.find(view(image, s.camera), s.camera, 0.1, 42);
  ASSERT_TRUE(found.has_value());
  EXPECT_LT((found->camera_T_tag.p - s.camera_T_tag.p).norm(), 0.001)
      << found->camera_T_tag.p.transpose();
  EXPECT_LT(angle_between(found->camera_T_tag.R, s.camera_T_tag.R), 1.0 * kDeg);
}

TEST(TagDetector, TheDepthScalesWithTheDeclaredTagSize) {
  Scene s;
  s.camera_T_tag.p = Vector3(0.0, 0.0, 0.3);
  const std::vector<std::uint8_t> image = render(s);
  TagDetector detector;
  // Told the tag is half its size, the detector puts it at half the distance.
  const std::optional<TagDetection> found = detector.find(view(image, s.camera), s.camera, 0.05, 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_NEAR(found->camera_T_tag.p.z(), 0.15, 0.0005);
}

TEST(TagDetector, FindsNothingWithoutATagAndOnlyTheIdAskedFor) {
  Scene s;
  s.camera_T_tag.p = Vector3(0.0, 0.0, 0.3);
  const std::vector<std::uint8_t> image = render(s);
  TagDetector detector;
  EXPECT_FALSE(detector.find(view(image, s.camera), s.camera, 0.1, 1).has_value());
  EXPECT_EQ(detector.detect(view(image, s.camera), s.camera, 0.1).size(), 1u);

  s.camera_T_tag.p = Vector3(5.0, 0.0, 0.3);  // far out of view
  const std::vector<std::uint8_t> empty = render(s);
  EXPECT_TRUE(detector.detect(view(empty, s.camera), s.camera, 0.1).empty());
}

TEST(TagDetector, RefusesBadInputNamingTheFieldTheValueAndTheRange) {
  const auto message = [](auto&& make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TagDetectorOptions options;
  options.decimate = 0.5;
  EXPECT_EQ(message([&] { TagDetector d(options); }),
            "tag detector: decimate = 0.5: must be in [1, 8]");
  TagDetector detector;
  const CameraIntrinsics camera;
  const std::vector<std::uint8_t> pixels(std::size_t{640} * 480, 128);
  EXPECT_EQ(message([&] {
              detector.detect(GrayImage{pixels.data(), 640, 480, 640}, camera, 0.0);
            }),
            "tag detector: tag_size = 0: must be finite and > 0 m");
  EXPECT_EQ(message([&] {
              detector.detect(GrayImage{pixels.data(), 8, 480, 640}, camera, 0.1);
            }),
            "tag detector: image.width = 8: must be ≥ 16 px");
  EXPECT_EQ(message([&] {
              detector.detect(GrayImage{pixels.data(), 640, 480, 320}, camera, 0.1);
            }),
            "tag detector: image.stride = 320: must be ≥ the width");
  EXPECT_EQ(message([] { tag36h11_image(587, 1); }),
            "tag detector: id = 587: must be in [0, 586] (tag36h11)");
  EXPECT_EQ(message([] { CameraIntrinsics::from_field_of_view(640, 480, 3.5); }),
            "tag detector: field_of_view = 3.5: must be in (0, 3) rad");
}

TEST(Tag36h11Image, IsABlackSquareInsideAWhiteMarginWithDataCellsInside) {
  const std::vector<std::uint8_t> tag = tag36h11_image(0, 2);
  ASSERT_EQ(tag.size(), 20u * 20u);
  const auto cell = [&](int row, int col) {
    return tag[static_cast<std::size_t>(2 * row) * 20 + static_cast<std::size_t>(2 * col)];
  };
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(cell(0, k), 255);  // the white margin
    EXPECT_EQ(cell(9, k), 255);
    EXPECT_EQ(cell(k, 0), 255);
    EXPECT_EQ(cell(k, 9), 255);
  }
  for (int k = 1; k < 9; ++k) {
    EXPECT_EQ(cell(1, k), 0);  // the black square's border
    EXPECT_EQ(cell(8, k), 0);
    EXPECT_EQ(cell(k, 1), 0);
    EXPECT_EQ(cell(k, 8), 0);
  }
  int white = 0;
  for (int r = 2; r < 8; ++r) {
    for (int c = 2; c < 8; ++c) white += cell(r, c) == 255 ? 1 : 0;
  }
  EXPECT_GT(white, 5);  // a code, not a blank
  EXPECT_LT(white, 31);
}

}  // namespace
}  // namespace tether::remote::vision
