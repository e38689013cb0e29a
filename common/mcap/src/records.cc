#include "tether/mcap/records.h"

namespace tether::mcap {

std::string_view compression_name(Compression compression) {
  switch (compression) {
    case Compression::kZstd:
      return "zstd";
    case Compression::kLz4:
      return "lz4";
    case Compression::kNone:
      break;
  }
  return "";
}

}  // namespace tether::mcap
