#pragma once

// What a camera view needs of its site's client: the stub, and how calls name their caller.
// Private to local_site/src/link.

#include <memory>
#include <string>

#include "tether/local/link/camera_view.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::local {

struct CameraView::Connection {
  std::shared_ptr<v1::RemoteSite::Stub> stub;
  std::string host;           // the site's, for its UDP port
  std::string operator_name;  // sent as metadata on an insecure link
  bool insecure = false;
  bool eye = false;  // WatchCameraRequest.eye
};

}  // namespace tether::local
