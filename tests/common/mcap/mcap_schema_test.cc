// Protobuf schemas in MCAP recordings (tether/proto/mcap_schema.h): the FileDescriptorSet a
// viewer decodes tether's messages with, complete and in dependency order, and channels
// registered through add_protobuf_channel whose messages decode from the file alone.
#include "tether/proto/mcap_schema.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tether/mcap/reader.h"
#include "tether/v1/geometry.pb.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::proto {
namespace {

namespace pb = google::protobuf;

TEST(McapSchema, FileDescriptorSetHoldsTheFileAndEveryImportDependenciesFirst) {
  pb::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(protobuf_schema(*v1::Telemetry::descriptor())));
  std::vector<std::string> names;
  for (const pb::FileDescriptorProto& f : set.file()) names.push_back(f.name());
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "tether/v1/remote_site.proto");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const char* imported : {"tether/v1/geometry.proto", "tether/v1/task.proto",
                               "tether/v1/behaviours/teleoperation.proto"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), imported), names.end()) << imported;
  }
  // Every import comes before the file that imports it ...
  for (int i = 0; i < set.file_size(); ++i) {
    for (const std::string& dependency : set.file(i).dependency()) {
      const auto at = std::find(names.begin(), names.end(), dependency);
      ASSERT_NE(at, names.end()) << dependency;
      EXPECT_LT(at - names.begin(), i) << dependency << " after " << names[i];
    }
  }
  // ... so a pool that knows nothing else builds them in order and finds the message.
  pb::DescriptorPool pool;
  for (const pb::FileDescriptorProto& f : set.file()) {
    ASSERT_NE(pool.BuildFile(f), nullptr) << f.name();
  }
  const pb::Descriptor* telemetry = pool.FindMessageTypeByName("tether.v1.Telemetry");
  ASSERT_NE(telemetry, nullptr);
  EXPECT_EQ(telemetry->field_count(), v1::Telemetry::descriptor()->field_count());

  // A file without imports is a set of one.
  ASSERT_TRUE(set.ParseFromString(protobuf_schema(*v1::Pose::descriptor())));
  ASSERT_EQ(set.file_size(), 1);
  EXPECT_EQ(set.file(0).name(), "tether/v1/geometry.proto");
}

TEST(McapSchema, ProtobufChannelsShareTheirTypesSchemaAndDecodeFromTheFileAlone) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("tether_mcap_schema_" + std::to_string(::getpid()) + ".mcap");
  v1::Telemetry sent;
  sent.set_cycle(12345);
  sent.set_task_name("door");
  sent.mutable_commanded_joints();
  sent.add_aux(0.25);
  std::uint16_t telemetry = 0;
  std::uint16_t other = 0;
  std::uint16_t pose = 0;
  {
    mcap::Writer w(path);
    telemetry = add_protobuf_channel<v1::Telemetry>(w, "/tether/telemetry");
    other = add_protobuf_channel<v1::Telemetry>(w, "/tether/other");
    pose = add_protobuf_channel<v1::Pose>(w, "/pose");
    w.write(telemetry, 1, 1, sent.SerializeAsString());
  }
  const mcap::Reader r(path);
  std::filesystem::remove(path);
  ASSERT_EQ(r.schemas().size(), 2U);
  const mcap::Channel& channel = r.channels().at(telemetry);
  EXPECT_EQ(channel.topic, "/tether/telemetry");
  EXPECT_EQ(channel.message_encoding, "protobuf");
  EXPECT_EQ(r.channels().at(other).schema_id, channel.schema_id);
  EXPECT_NE(r.channels().at(pose).schema_id, channel.schema_id);
  const mcap::Schema& schema = r.schemas().at(channel.schema_id);
  EXPECT_EQ(schema.name, "tether.v1.Telemetry");
  EXPECT_EQ(schema.encoding, "protobuf");

  // Decode as a viewer does, with nothing but the schema in the file.
  pb::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(schema.data));
  pb::DescriptorPool pool;
  for (const pb::FileDescriptorProto& f : set.file()) ASSERT_NE(pool.BuildFile(f), nullptr);
  pb::DynamicMessageFactory factory(&pool);
  const pb::Descriptor* type = pool.FindMessageTypeByName(schema.name);
  ASSERT_NE(type, nullptr);
  int messages = 0;
  r.for_each_message([&](const mcap::Channel& c, const mcap::Message& m) {
    EXPECT_EQ(c.id, telemetry);
    const std::unique_ptr<pb::Message> decoded(factory.GetPrototype(type)->New());
    ASSERT_TRUE(decoded->ParseFromArray(m.data.data(), static_cast<int>(m.data.size())));
    EXPECT_EQ(decoded->DebugString(), sent.DebugString());
    ++messages;
  });
  EXPECT_EQ(messages, 1);
}

}  // namespace
}  // namespace tether::proto
