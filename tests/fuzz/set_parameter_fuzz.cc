// SetParameter as the remote site applies it: PATH '\n' VALUE set on the running task's
// message (the seed's door task), then converted and validated like an upload. Only the
// documented ConversionError may come out.

#include <cstddef>
#include <cstdint>
#include <string>

#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/convert.h"
#include "tether/proto/set_field.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tether::KinematicModel model(tether::load_default_arm());
  static const tether::v1::TaskParameters door = tether::proto::from_task(
      tether::proto::load_task_file(TETHER_TASK_DIR "/door_shared.textproto"));
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\n');
  const std::string path = input.substr(0, split);
  const std::string value = split == std::string::npos ? std::string() : input.substr(split + 1);
  tether::v1::TaskParameters task = door;
  try {
    tether::proto::set_field(task, path, value);
    (void)tether::validate_task(tether::proto::to_task(task), model);
  } catch (const tether::proto::ConversionError&) {
  }
  return 0;
}
