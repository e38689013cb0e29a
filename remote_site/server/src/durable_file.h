#pragma once

// Files that survive a crash or power loss at any instant: written whole or not at all.

#include <string>

namespace tether::remote::server {

// Replaces `path` with `contents` atomically: writes a temporary file beside it, fsyncs it,
// renames it over `path` and fsyncs the directory, so after a crash `path` holds either
// the old or the new contents, never a mix or nothing. Throws std::runtime_error naming
// the file and the system's reason.
void write_file_durably(const std::string& path, const std::string& contents);

// Removes `path` and fsyncs its directory; a missing file is not an error.
void remove_file_durably(const std::string& path);

// Suffix of the temporary files write_file_durably leaves behind if it is interrupted.
inline constexpr const char* kTemporarySuffix = ".partial";

}  // namespace tether::remote::server
