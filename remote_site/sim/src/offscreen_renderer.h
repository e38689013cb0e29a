#pragma once

// MuJoCo's own renderer in an off-screen, headless OpenGL context: Mesa's surfaceless EGL
// platform (its software rasteriser, llvmpipe, when there is no GPU), a legacy (compatibility)
// GL context as MuJoCo 2.2's renderer needs, and MuJoCo's off-screen framebuffer. Private to
// the simulated arm's cameras (rendered_camera.h).
//
// Threads. A GL context is current on one thread at a time: render() makes it current on the
// calling thread if it is not already; whoever renders from another thread later must first
// call release() on the previous one. Shadows, reflections and the skybox are off (about 3×
// cheaper on the software rasteriser: ~7 ms for 640 × 480).
//
// Not real-time: render() takes milliseconds; set-up allocates and throws.

#include <cstdint>
#include <memory>
#include <string>

struct mjModel_;
struct mjData_;

namespace tether::remote::detail {

// Mesa's software rasteriser (llvmpipe) otherwise spreads each render over worker threads of
// its own, one a core, at normal priority: beside the control loop on a small machine they
// take twice the render thread's CPU and delay the loop's services. With none, the render
// runs on the (niced) thread that asks for it. Sets LP_NUM_THREADS=0 unless the environment
// says otherwise; call it before the process's first render and before other threads read
// the environment (SimulatedArm's constructor does).
void keep_software_rendering_on_the_calling_thread();

class OffscreenRenderer {
 public:
  // Creates the context for `model` (its textures and meshes uploaded) with an off-screen
  // buffer of at least max_width × max_height (the model's <visual><global offwidth/offheight>
  // must be as large). Throws std::runtime_error naming the EGL or MuJoCo step that failed.
  OffscreenRenderer(const mjModel_* model, int max_width, int max_height);
  ~OffscreenRenderer();
  OffscreenRenderer(const OffscreenRenderer&) = delete;
  OffscreenRenderer& operator=(const OffscreenRenderer&) = delete;

  // Renders the model's camera `camera_id` as `data` (its kinematics and camera poses
  // computed: mj_forward, mj_kinematics + mj_camlight) places it, into `rgb` (width × height
  // × 3 bytes, top row first). Returns false if the context could not be made current.
  bool render(const mjData_* data, int camera_id, int width, int height, std::uint8_t* rgb);

  // Lets another thread make the context current.
  void release();

  // Which GL renders (e.g. "llvmpipe (LLVM 15.0.6, 256 bits)").
  const std::string& gl_renderer() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Puts `data` in a state copied from the simulation (positions, mocap poses, time; the sizes
// of the model's nq and nmocap) and computes what rendering needs: the bodies' and cameras'
// poses (mj_kinematics, mj_camlight). For the render threads' snapshots.
void set_render_state(const mjModel_* model, mjData_* data, const double* qpos,
                      const double* mocap_pos, const double* mocap_quat, double time) noexcept;

// RGB (3 bytes a pixel) to 8-bit grey (ITU-R BT.601 luma), for the detector.
void rgb_to_gray(const std::uint8_t* rgb, int width, int height, std::uint8_t* gray) noexcept;

}  // namespace tether::remote::detail
