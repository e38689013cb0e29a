#include "task_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"

namespace tether::remote::server {
namespace {

namespace fs = std::filesystem;

class TaskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("tether_task_store_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  static TaskParameters task_with_mass(double mass) {
    TaskParameters task;
    task.impedance.mass.setConstant(mass);
    return task;
  }
  void write(const std::string& file, const std::string& text) const {
    fs::create_directories(directory_);
    std::ofstream(directory_ / file) << text;
  }

  const KinematicModel model_{load_default_arm()};
  fs::path directory_;
};

TEST_F(TaskStoreTest, StoredSetsAndTheirRevisionsSurviveARestart) {
  {
    TaskStore store(model_, directory_.string());
    EXPECT_EQ(store.put("reach", task_with_mass(3.0), false), 1U);
    EXPECT_EQ(store.put("reach", task_with_mass(4.0), true), 2U);
  }
  TaskStore restarted(model_, directory_.string());
  const auto stored = restarted.get("reach");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->revision, 2U);
  TaskParameters expected = task_with_mass(4.0);
  expected.name = "reach";
  EXPECT_EQ(proto::to_text(stored->task), proto::to_text(expected));
  EXPECT_EQ(restarted.put("reach", task_with_mass(5.0), true), 3U);
}

TEST_F(TaskStoreTest, AnUploadInterruptedMidWriteLeavesTheStoredSetIntactAndIsRemoved) {
  {
    TaskStore store(model_, directory_.string());
    store.put("reach", task_with_mass(3.0), false);
  }
  // What a crash between the temporary file's creation and its rename leaves behind.
  write("reach.textproto.partial", "impedance { mass { translation { x: ");
  TaskStore restarted(model_, directory_.string());
  ASSERT_TRUE(restarted.get("reach"));
  EXPECT_DOUBLE_EQ(restarted.get("reach")->task.impedance.mass[0], 3.0);
  EXPECT_FALSE(fs::exists(directory_ / "reach.textproto.partial"));
  EXPECT_TRUE(restarted.rejected().empty());
}

TEST_F(TaskStoreTest, CorruptAndInvalidStoredFilesAreMovedAsideAndTheRestStillLoads) {
  {
    TaskStore store(model_, directory_.string());
    store.put("good", task_with_mass(3.0), false);
  }
  write("garbled.textproto", "impedance { mass { translation { x: ");
  write("invalid.textproto", "period_s: 7\n");
  TaskStore restarted(model_, directory_.string());
  EXPECT_TRUE(restarted.get("good"));
  EXPECT_FALSE(restarted.get("garbled"));
  EXPECT_FALSE(restarted.get("invalid"));
  EXPECT_EQ(restarted.rejected().size(), 2U);
  EXPECT_FALSE(fs::exists(directory_ / "garbled.textproto"));
  EXPECT_FALSE(fs::exists(directory_ / "invalid.textproto"));
  int aside = 0;
  for (const auto& entry : fs::directory_iterator(directory_ / "rejected")) {
    const std::string file = entry.path().filename().string();
    EXPECT_TRUE(file.starts_with("garbled.textproto.") || file.starts_with("invalid.textproto."))
        << file;
    ++aside;
  }
  EXPECT_EQ(aside, 2);
}

TEST_F(TaskStoreTest, RefusesAHugeNameQuotingOnlyItsStart) {
  TaskStore store(model_, directory_.string());
  try {
    store.put(std::string(100000, 'x'), task_with_mass(3.0), false);
    FAIL() << "a 100,000-character name was stored";
  } catch (const TaskStoreError& e) {
    EXPECT_EQ(e.kind(), TaskStoreError::Kind::kInvalidName);
    EXPECT_LT(std::string(e.what()).size(), 200U) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 to 64"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.list().empty());
}

TEST_F(TaskStoreTest, DeletedSetsStayDeletedAfterARestart) {
  {
    TaskStore store(model_, directory_.string());
    store.put("reach", task_with_mass(3.0), false);
    store.remove("reach");
  }
  TaskStore restarted(model_, directory_.string());
  EXPECT_FALSE(restarted.get("reach"));
}

}  // namespace
}  // namespace tether::remote::server
