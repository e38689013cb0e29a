// Task files as the console and the remote site read them: protobuf text format or JSON
// (a leading '{'), converted and validated against the iiwa7. Every input must end in a
// task or in the documented exceptions; anything else (a crash, a sanitizer report, another
// exception) is a finding.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tether::KinematicModel model(tether::load_default_arm());
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const bool json = !text.empty() && text.front() == '{';
    const tether::TaskParameters task =
        json ? tether::proto::parse_task_json(text, "fuzz.json")
             : tether::proto::parse_task_text(text, "fuzz.textproto");
    (void)tether::validate_task(task, model);
  } catch (const tether::proto::ConversionError&) {
  }
  return 0;
}
