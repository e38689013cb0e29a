#include "offscreen_renderer.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace tether::remote::detail {

namespace {

std::string egl_error(const char* step) {
  char text[96];
  std::snprintf(text, sizeof text, "%s failed (EGL error 0x%04x)", step, eglGetError());
  return std::string("off-screen renderer: ") + text +
         "; needs Mesa's EGL (Debian: libegl1, libegl-mesa0, libgl1-mesa-dri)";
}

// One EGL display for the process: eglTerminate would end every context on it, so it is
// initialised once and never terminated.
EGLDisplay shared_display() {
  static std::once_flag once;
  static EGLDisplay display = EGL_NO_DISPLAY;
  static std::string failure;
  std::call_once(once, [] {
    const auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (get_platform_display == nullptr) {
      failure = egl_error("eglGetProcAddress(eglGetPlatformDisplayEXT)");
      return;
    }
    // Surfaceless: no window system, no device files; Mesa picks a GPU's driver if there is
    // one, else its software rasteriser.
    EGLDisplay d =
        get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    EGLint major = 0;
    EGLint minor = 0;
    if (d == EGL_NO_DISPLAY || eglInitialize(d, &major, &minor) == EGL_FALSE) {
      failure = egl_error("eglInitialize on the surfaceless platform");
      return;
    }
    display = d;
  });
  if (display == EGL_NO_DISPLAY) throw std::runtime_error(failure);
  return display;
}

}  // namespace

void keep_software_rendering_on_the_calling_thread() {
  setenv("LP_NUM_THREADS", "0", /*overwrite=*/0);
}

struct OffscreenRenderer::Impl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  const mjModel* model = nullptr;
  mjvScene scene{};
  mjvCamera camera{};
  mjvOption option{};
  mjrContext gl{};
  bool scene_made = false;
  bool gl_made = false;
  std::string renderer;
  std::vector<std::uint8_t> row;  // a row's bytes, for flipping

  bool make_current() {
    if (eglGetCurrentContext() == context) return true;
    return eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context) == EGL_TRUE;
  }

  ~Impl() {
    if (context != EGL_NO_CONTEXT && make_current()) {
      if (gl_made) mjr_freeContext(&gl);
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    }
    if (scene_made) mjv_freeScene(&scene);
    if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
  }
};

OffscreenRenderer::OffscreenRenderer(const mjModel* model, int max_width, int max_height)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.model = model;
  if (model->vis.global.offwidth < max_width || model->vis.global.offheight < max_height) {
    throw std::runtime_error("off-screen renderer: the model's off-screen buffer (" +
                             std::to_string(model->vis.global.offwidth) + " × " +
                             std::to_string(model->vis.global.offheight) +
                             ") is smaller than the largest camera image (" +
                             std::to_string(max_width) + " × " + std::to_string(max_height) + ")");
  }
  s.display = shared_display();
  const EGLint config_attributes[] = {EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
                                      EGL_ALPHA_SIZE, 8, EGL_DEPTH_SIZE, 24, EGL_STENCIL_SIZE, 8,
                                      EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                      // Surfaceless has no windows (the default type).
                                      EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint configs = 0;
  if (eglChooseConfig(s.display, config_attributes, &config, 1, &configs) == EGL_FALSE) {
    throw std::runtime_error(
        egl_error("eglChooseConfig (RGBA8, depth 24, desktop OpenGL, pbuffer)"));
  }
  if (configs < 1) {
    throw std::runtime_error(
        "off-screen renderer: EGL offers no RGBA8 configuration with a 24-bit depth buffer for "
        "desktop OpenGL");
  }
  if (eglBindAPI(EGL_OPENGL_API) == EGL_FALSE) {
    throw std::runtime_error(egl_error("eglBindAPI(EGL_OPENGL_API)"));
  }
  // No attributes: a compatibility-profile context, the fixed-function GL MuJoCo 2.2 draws with.
  s.context = eglCreateContext(s.display, config, EGL_NO_CONTEXT, nullptr);
  if (s.context == EGL_NO_CONTEXT) throw std::runtime_error(egl_error("eglCreateContext"));
  if (!s.make_current()) throw std::runtime_error(egl_error("eglMakeCurrent (surfaceless)"));

  mjv_defaultScene(&s.scene);
  mjv_defaultCamera(&s.camera);
  mjv_defaultOption(&s.option);
  mjr_defaultContext(&s.gl);
  mjv_makeScene(model, &s.scene, 2000);
  s.scene_made = true;
  mjr_makeContext(model, &s.gl, mjFONTSCALE_100);
  s.gl_made = true;
  mjr_setBuffer(mjFB_OFFSCREEN, &s.gl);
  if (s.gl.currentBuffer != mjFB_OFFSCREEN) {
    throw std::runtime_error("off-screen renderer: MuJoCo has no off-screen framebuffer");
  }
  // glGetString is not linked here (MuJoCo loads GL itself); MuJoCo's context has no query
  // for it either, so the vendor string of EGL names the stack.
  const char* vendor = eglQueryString(s.display, EGL_VENDOR);
  s.renderer = vendor != nullptr ? vendor : "";
  s.scene.flags[mjRND_SHADOW] = 0;
  s.scene.flags[mjRND_REFLECTION] = 0;
  s.scene.flags[mjRND_SKYBOX] = 0;
  s.camera.type = mjCAMERA_FIXED;
}

OffscreenRenderer::~OffscreenRenderer() = default;

bool OffscreenRenderer::render(const mjData* data, int camera_id, int width, int height,
                               std::uint8_t* rgb) {
  Impl& s = *impl_;
  if (!s.make_current()) return false;
  s.camera.fixedcamid = camera_id;
  mjv_updateScene(s.model, const_cast<mjData*>(data),  // NOLINT: MuJoCo 2.2 takes it non-const
                  &s.option, nullptr, &s.camera, mjCAT_ALL, &s.scene);
  const mjrRect viewport{0, 0, width, height};
  mjr_render(viewport, &s.scene, &s.gl);
  mjr_readPixels(rgb, nullptr, viewport, &s.gl);
  // GL's rows run bottom up; images run top down.
  const std::size_t row = static_cast<std::size_t>(width) * 3;
  std::vector<std::uint8_t>& swap = s.row;
  swap.resize(row);
  for (int y = 0; y < height / 2; ++y) {
    std::uint8_t* top = rgb + static_cast<std::size_t>(y) * row;
    std::uint8_t* bottom = rgb + static_cast<std::size_t>(height - 1 - y) * row;
    std::memcpy(swap.data(), top, row);
    std::memcpy(top, bottom, row);
    std::memcpy(bottom, swap.data(), row);
  }
  return true;
}

void OffscreenRenderer::release() {
  if (eglGetCurrentContext() == impl_->context) {
    eglMakeCurrent(impl_->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
}

const std::string& OffscreenRenderer::gl_renderer() const { return impl_->renderer; }

void rgb_to_gray(const std::uint8_t* rgb, int width, int height, std::uint8_t* gray) noexcept {
  const std::size_t n = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* p = rgb + 3 * i;
    gray[i] = static_cast<std::uint8_t>((77U * p[0] + 150U * p[1] + 29U * p[2]) >> 8U);
  }
}

void set_render_state(const mjModel* model, mjData* data, const double* qpos,
                      const double* mocap_pos, const double* mocap_quat, double time) noexcept {
  std::copy_n(qpos, model->nq, data->qpos);
  std::copy_n(mocap_pos, 3 * model->nmocap, data->mocap_pos);
  std::copy_n(mocap_quat, 4 * model->nmocap, data->mocap_quat);
  data->time = time;
  mj_kinematics(model, data);
  mj_camlight(model, data);
}

}  // namespace tether::remote::detail
