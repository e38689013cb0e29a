#pragma once

// The conversion of each behaviour's section of a task, one pair per entry of the list of
// behaviours (tether/remote/behaviours/list.h), each defined in behaviours/<field>.cc.
// to_task and from_task (task_io.cc) expand the list over them, so they name no behaviour.
//
//   read_parameters   message -> domain, starting from a default-constructed section: the
//                     fields the message leaves out keep their defaults. Throws
//                     ConversionError naming the field (the spelling of field_path.h).
//   write_parameters  domain -> `out`.<field>: only values that differ from their defaults
//                     (NaN always does, and is rejected when read back), and the section
//                     only if one does, so that written tasks stay short.

#include "tether/remote/task/task_parameters.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {

#define TETHER_DECLARE(field, Name, ENUM, label)                        \
  void read_parameters(const v1::Name##Parameters&, Name##Parameters&); \
  void write_parameters(const Name##Parameters&, v1::TaskParameters&);
TETHER_BEHAVIOURS(TETHER_DECLARE)
#undef TETHER_DECLARE

}  // namespace tether::proto
