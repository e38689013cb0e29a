// The remote site's black box (black_box.h): every cycle of a real-time loop on the simulated
// arm lands in a ring of MCAP segments, in order and without a gap across segments; old
// segments leave the ring, a breach's stay; a fetch closes the open segment first so every
// file it names is whole.

#include "black_box.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "tether/common/urdf_loader.h"
#include "tether/mcap/reader.h"
#include "tether/proto/recording_topics.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::remote::server {
namespace {

namespace fs = std::filesystem;

// A site's loop in real time on the simulated arm, with a black box in a fresh directory.
class BlackBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("tether-black-box-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    model_ = load_arm_by_name("iiwa7", UrdfLoadOptions{});
    arm_ = std::make_unique<SimulatedArm>(model_, SimulationOptions{});
    executor_ = std::make_unique<Executor>(arm_->model(), queue_);
    loop_ = std::make_unique<ControlLoop>(*arm_, *executor_, Pacing::kRealTime);
    loop_->start();
  }
  void TearDown() override {
    box_.reset();
    loop_->stop();
    fs::remove_all(directory_);
  }
  void open(BlackBoxOptions options) {
    options.directory = directory_.string();
    box_ = std::make_unique<BlackBox>(*loop_, options,
                                      std::map<std::string, std::string>{{"arm", "iiwa7"}});
  }
  static void wait(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  // Telemetry cycle numbers of a segment, in log-time order.
  static std::vector<std::uint64_t> cycles(const fs::path& path) {
    const mcap::Reader reader(path);
    std::vector<std::uint64_t> out;
    reader.for_each_message([&](const mcap::Channel& channel, const mcap::Message& message) {
      if (channel.topic != recording::kTelemetry) return;
      v1::Telemetry t;
      EXPECT_TRUE(t.ParseFromArray(message.data.data(), static_cast<int>(message.data.size())));
      out.push_back(t.cycle());
    });
    return out;
  }

  fs::path directory_;
  ArmModel model_;
  HandControllerQueue queue_;
  std::unique_ptr<SimulatedArm> arm_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<ControlLoop> loop_;
  std::unique_ptr<BlackBox> box_;
};

TEST_F(BlackBoxTest, KeepsEveryCycleInOrderAcrossSegments) {
  BlackBoxOptions options;
  options.segment = 0.4;
  options.sync_interval = 0.1;
  open(options);
  wait(1.5);
  box_->stop();
  const std::vector<SegmentInfo> segments = box_->segments();
  ASSERT_GE(segments.size(), 3U);
  std::vector<std::uint64_t> all;
  for (const SegmentInfo& s : segments) {
    EXPECT_TRUE(s.complete) << s.path;
    const mcap::Reader reader(s.path);
    EXPECT_FALSE(reader.truncated()) << s.path;
    const std::vector<std::uint64_t> c = cycles(s.path);
    all.insert(all.end(), c.begin(), c.end());
  }
  ASSERT_GT(all.size(), 1000U);
  for (std::size_t k = 1; k < all.size(); ++k) {
    ASSERT_EQ(all[k], all[k - 1] + 1) << "a cycle missing or repeated after " << all[k - 1];
  }
  EXPECT_EQ(loop_->statistics().recording_dropped, 0U);
}

TEST_F(BlackBoxTest, ForgetsBeyondItsWindowButKeepsABreachsSegments) {
  BlackBoxOptions options;
  options.segment = 0.3;
  options.sync_interval = 0.1;
  options.window = 1.0;
  open(options);
  wait(0.5);
  executor_->request_stop(BreachCause::kOperatorStop);
  wait(0.2);
  std::string breach;
  for (const SegmentInfo& s : box_->segments()) {
    if (!s.breaches.empty()) breach = s.breaches.front();
  }
  ASSERT_FALSE(breach.empty()) << "the stop marked no segment";
  EXPECT_NE(breach.find("operator-stop"), std::string::npos) << breach;
  wait(2.5);
  const std::vector<SegmentInfo> kept = box_->segments();
  std::size_t marked = 0;
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  for (const SegmentInfo& s : kept) {
    if (!s.breaches.empty()) {
      ++marked;
      EXPECT_TRUE(fs::exists(s.path));
    } else if (&s != &kept.back()) {
      EXPECT_GT(s.end_unix_ns, now - 2'000'000'000) << s.path << " outlived the 1 s window";
    }
  }
  EXPECT_EQ(marked, 2U) << "the breach's segment and the one before it";
  // Nothing on disk the ring no longer knows.
  std::set<fs::path> known;
  for (const SegmentInfo& s : kept) known.insert(s.path);
  for (const fs::directory_entry& e : fs::directory_iterator(directory_)) {
    if (e.path().extension() == ".mcap") {
      EXPECT_TRUE(known.count(e.path())) << e.path();
    }
  }
}

TEST_F(BlackBoxTest, FetchAroundABreachGivesWholeFilesThatHoldIt) {
  BlackBoxOptions options;
  options.segment = 30.0;  // the fetch, not the clock, closes the open segment
  options.sync_interval = 0.1;
  open(options);
  wait(0.4);
  executor_->request_stop(BreachCause::kOperatorStop);
  wait(0.3);
  std::string breach;
  for (const SegmentInfo& s : box_->segments()) {
    if (!s.breaches.empty()) breach = s.breaches.front();
  }
  ASSERT_FALSE(breach.empty());
  SegmentQuery query;
  query.breach_id = breach;
  const std::vector<SegmentInfo> fetched = box_->fetch(query);
  ASSERT_EQ(fetched.size(), 1U);
  EXPECT_TRUE(fetched[0].complete);
  const mcap::Reader reader(fetched[0].path);
  EXPECT_FALSE(reader.truncated());
  bool stopped = false;
  reader.for_each_message([&](const mcap::Channel& channel, const mcap::Message& message) {
    if (channel.topic != recording::kEvents) return;
    v1::SiteEvent e;
    ASSERT_TRUE(e.ParseFromArray(message.data.data(), static_cast<int>(message.data.size())));
    if (e.breach_id() == breach) {
      stopped = true;
      EXPECT_EQ(e.breach().cause(), v1::BREACH_CAUSE_OPERATOR_STOP);
    }
  });
  EXPECT_TRUE(stopped) << "the fetched segment does not hold the breach's event";

  query.breach_id = "B1-nothing";
  EXPECT_THROW(box_->fetch(query), std::invalid_argument);
}

TEST_F(BlackBoxTest, StaysWithinItsDiskBudget) {
  BlackBoxOptions options;
  options.segment = 0.2;
  options.sync_interval = 0.1;
  options.budget = 300'000;
  open(options);
  wait(2.5);
  std::uint64_t closed = 0;
  const std::vector<SegmentInfo> kept = box_->segments();
  for (std::size_t k = 0; k + 1 < kept.size(); ++k) closed += fs::file_size(kept[k].path);
  EXPECT_LE(closed, options.budget);
  EXPECT_GE(kept.size(), 2U);
}

TEST_F(BlackBoxTest, ReadsTheSegmentsAPreviousRunLeft) {
  BlackBoxOptions options;
  options.segment = 0.3;
  options.sync_interval = 0.1;
  open(options);
  wait(0.8);
  box_.reset();
  const std::size_t before = std::distance(fs::directory_iterator(directory_), {});
  open(options);
  const std::vector<SegmentInfo> segments = box_->segments();
  EXPECT_GE(segments.size(), 3U);
  // The new run's segment numbers follow the old ones.
  for (std::size_t k = 1; k < segments.size(); ++k) {
    EXPECT_GT(segments[k].sequence, segments[k - 1].sequence);
  }
  EXPECT_GE(std::distance(fs::directory_iterator(directory_), {}),
            static_cast<std::ptrdiff_t>(before));
}

}  // namespace
}  // namespace tether::remote::server
