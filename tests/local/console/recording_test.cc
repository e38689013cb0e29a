#include "tether/local/console/recording.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace tether::local {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tether_recording_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Built piecewise: `"literal" + std::string` trips GCC 12's -Wrestrict false positive.
std::string column_name(const char* stem, int index) {
  std::string name = stem;
  name += std::to_string(index);
  return name;
}

std::vector<TelemetrySample> samples(int count) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<TelemetrySample> out(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    TelemetrySample& s = out[static_cast<std::size_t>(k)];
    s.cycle = 1000 + static_cast<std::uint64_t>(k) * 10;
    s.arm_time = 12.5 + 0.01 * k;
    s.task_time = 0.01 * k;
    s.state = k < count - 1 ? ExecutorState::kRunning : ExecutorState::kStopping;
    s.task_id = 4;
    s.task_name = "door_force";
    for (int i = 0; i < 6; ++i) s.wrench[i] = u(rng);
    for (int i = 0; i < 7; ++i) {
      s.commanded_joints[i] = u(rng);
      s.measured_joints[i] = u(rng);
      s.error[i] = u(rng);
    }
    s.motion_position = Vector3(u(rng), u(rng), u(rng));
    s.aux = {0.01 * k, 0.3};
    if (k == count - 1) s.breach.cause = BreachCause::kOperatorStop;
  }
  return out;
}

TEST(Recording, ReadsBackEveryColumnExactly) {
  const auto input = samples(50);
  const std::string path = temp_path("roundtrip.csv");
  {
    std::ofstream file(path);
    RecordingWriter writer(file);
    for (const auto& s : input) writer.write(s);
    EXPECT_EQ(writer.rows(), input.size());
  }
  const Recording rec = read_recording(path);
  ASSERT_EQ(rec.rows, input.size());
  for (std::size_t k = 0; k < input.size(); ++k) {
    const TelemetrySample& s = input[k];
    EXPECT_EQ(rec.column("time_s")[k], s.arm_time - input[0].arm_time);
    EXPECT_EQ(rec.column("arm_time_s")[k], s.arm_time);
    EXPECT_EQ(rec.column("cycle")[k], static_cast<double>(s.cycle));
    EXPECT_EQ(rec.column("aux0")[k], s.aux[0]);
    EXPECT_EQ(rec.column("aux1")[k], s.aux[1]);
    EXPECT_TRUE(std::isnan(rec.column("aux2")[k]));  // not sent
    EXPECT_EQ(rec.column("force_n")[k], s.wrench.head<3>().norm());
    EXPECT_EQ(rec.column("torque_nm")[k], s.wrench.tail<3>().norm());
    EXPECT_EQ(rec.column("tz")[k], s.wrench[5]);
    EXPECT_EQ(rec.column("y")[k], s.motion_position.y());
    for (int i = 0; i < 7; ++i) {
      EXPECT_EQ(rec.column(column_name("q", i + 1))[k], s.commanded_joints[i]);
      EXPECT_EQ(rec.column(column_name("measured_q", i + 1))[k], s.measured_joints[i]);
      EXPECT_EQ(rec.column(column_name("error", i))[k], s.error[i]);
    }
    EXPECT_EQ(rec.text("task")[k], "door_force");
  }
  EXPECT_EQ(rec.text("state").front(), "running");
  EXPECT_EQ(rec.text("state").back(), "stopping");
  EXPECT_EQ(rec.text("breach").back(), "operator stop");
  std::filesystem::remove(path);
}

TEST(Recording, HeaderNamesTheDocumentedColumns) {
  const std::string header = recording_header();
  EXPECT_EQ(header.rfind("time_s,arm_time_s,task_time_s,cycle,state,task_id,task,aux0,", 0), 0u);
  EXPECT_NE(header.find(",force_n,torque_nm,fx,fy,fz,tx,ty,tz,"), std::string::npos);
  EXPECT_NE(header.find(",measured_q7,breach,overruns,compute_s"), std::string::npos);
}

TEST(Recording, RejectsAMalformedNumberNamingLineAndColumn) {
  const std::string path = temp_path("bad.csv");
  {
    std::ofstream file(path);
    RecordingWriter writer(file);
    writer.write(samples(1)[0]);
  }
  std::string text;
  {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  // Corrupt the first number of the data row (time_s).
  const auto row = text.find('\n') + 1;
  text.replace(row, 1, "x");
  std::ofstream(path) << text;
  try {
    read_recording(path);
    FAIL() << "a malformed number was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(":2: column time_s = 'x"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Recording, PlotsARecordingAsPng) {
  const std::string csv = temp_path("plot.csv");
  const std::string png = temp_path("plot.png");
  {
    std::ofstream file(csv);
    RecordingWriter writer(file);
    for (const auto& s : samples(200)) writer.write(s);
  }
  plot_recording(read_recording(csv), "tether: test", png);
  std::ifstream in(png, std::ios::binary);
  char signature[8] = {};
  in.read(signature, 8);
  EXPECT_EQ(std::string(signature, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Three panels of 350 px plus the title band: taller than two panels.
  in.seekg(16 + 4);
  unsigned char h[4] = {};
  in.read(reinterpret_cast<char*>(h), 4);
  const unsigned height = (h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3];
  EXPECT_GT(height, 3u * 350u);
  std::filesystem::remove(csv);
  std::filesystem::remove(png);
}

TEST(Recording, RefusesToPlotAnEmptyRecording) {
  const std::string csv = temp_path("empty.csv");
  {
    std::ofstream file(csv);
    RecordingWriter writer(file);
  }
  EXPECT_THROW(plot_recording(read_recording(csv), "t", temp_path("empty.png")),
               std::runtime_error);
  std::filesystem::remove(csv);
}

}  // namespace
}  // namespace tether::local
