#include "frame_renderer.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "errors.h"
#include "mujoco_errors.h"

namespace joltgym::capi {
namespace {

// The EGL 1.5 names this file uses (EGL/egl.h and EGL/eglext.h are not needed
// to build: the functions are looked up in libEGL.so.1 at run time).
using EGLDisplay = void*;
using EGLConfig = void*;
using EGLContext = void*;
using EGLSurface = void*;
using EGLDeviceEXT = void*;
using EGLint = std::int32_t;
using EGLBoolean = unsigned int;
using EGLenum = unsigned int;

constexpr EGLint kEglSuccess = 0x3000;
constexpr EGLint kEglNone = 0x3038;
constexpr EGLenum kEglOpenGlApi = 0x30A2;
constexpr EGLenum kEglPlatformDeviceExt = 0x313F;
// mujoco.egl's EGL_ATTRIBUTES, the config Python's renderer asks for.
constexpr EGLint kConfigAttributes[] = {
    0x3024, 8,       // EGL_RED_SIZE
    0x3023, 8,       // EGL_GREEN_SIZE
    0x3022, 8,       // EGL_BLUE_SIZE
    0x3021, 8,       // EGL_ALPHA_SIZE
    0x3025, 24,      // EGL_DEPTH_SIZE
    0x3026, 8,       // EGL_STENCIL_SIZE
    0x303F, 0x308E,  // EGL_COLOR_BUFFER_TYPE, EGL_RGB_BUFFER
    0x3033, 0x0001,  // EGL_SURFACE_TYPE, EGL_PBUFFER_BIT
    0x3040, 0x0008,  // EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT
    kEglNone};

struct Egl {
  void* (*GetProcAddress)(const char*) = nullptr;
  EGLint (*GetError)() = nullptr;
  EGLDisplay (*GetDisplay)(void*) = nullptr;
  EGLBoolean (*Initialize)(EGLDisplay, EGLint*, EGLint*) = nullptr;
  EGLBoolean (*ChooseConfig)(EGLDisplay, const EGLint*, EGLConfig*, EGLint, EGLint*) = nullptr;
  EGLBoolean (*BindAPI)(EGLenum) = nullptr;
  EGLContext (*CreateContext)(EGLDisplay, EGLConfig, EGLContext, const EGLint*) = nullptr;
  EGLBoolean (*DestroyContext)(EGLDisplay, EGLContext) = nullptr;
  EGLBoolean (*MakeCurrent)(EGLDisplay, EGLSurface, EGLSurface, EGLContext) = nullptr;
  EGLBoolean (*ReleaseThread)() = nullptr;
  EGLBoolean (*QueryDevicesEXT)(EGLint, EGLDeviceEXT*, EGLint*) = nullptr;
  EGLDisplay (*GetPlatformDisplayEXT)(EGLenum, void*, const EGLint*) = nullptr;
  EGLDisplay display = nullptr;
  std::string error;  // why EGL is unusable, once found out
};

constexpr const char* kPackages =
    "headless rendering needs EGL and OpenGL (Debian: apt-get install libegl1 libgl1-mesa-dri; "
    "set-up command 2 installs them)";

template <typename F>
void Lookup(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (out == nullptr) throw StateError(std::string("libEGL.so.1 has no ") + name + "; " + kPackages);
}

// Opens EGL and a display once per process, as mujoco.egl does: the first
// EGL device whose platform display initializes (Mesa's software device on a
// machine without a GPU), else the default display.
Egl& OpenEgl() {
  static Egl egl;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      // GLOBAL: MuJoCo finds eglGetProcAddress and the GL functions by name.
      void* gl = dlopen("libOpenGL.so.0", RTLD_NOW | RTLD_GLOBAL);
      if (gl == nullptr) gl = dlopen("libGL.so.1", RTLD_NOW | RTLD_GLOBAL);
      if (gl == nullptr) throw StateError(std::string("cannot open libOpenGL.so.0 or libGL.so.1; ") + kPackages);
      void* lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL);
      if (lib == nullptr) {
        const char* why = dlerror();
        throw StateError(std::string("cannot open libEGL.so.1 (") + (why ? why : "not found") + "); " +
                         kPackages);
      }
      Lookup(lib, "eglGetProcAddress", egl.GetProcAddress);
      Lookup(lib, "eglGetError", egl.GetError);
      Lookup(lib, "eglGetDisplay", egl.GetDisplay);
      Lookup(lib, "eglInitialize", egl.Initialize);
      Lookup(lib, "eglChooseConfig", egl.ChooseConfig);
      Lookup(lib, "eglBindAPI", egl.BindAPI);
      Lookup(lib, "eglCreateContext", egl.CreateContext);
      Lookup(lib, "eglDestroyContext", egl.DestroyContext);
      Lookup(lib, "eglMakeCurrent", egl.MakeCurrent);
      Lookup(lib, "eglReleaseThread", egl.ReleaseThread);
      egl.QueryDevicesEXT = reinterpret_cast<decltype(egl.QueryDevicesEXT)>(
          egl.GetProcAddress("eglQueryDevicesEXT"));
      egl.GetPlatformDisplayEXT = reinterpret_cast<decltype(egl.GetPlatformDisplayEXT)>(
          egl.GetProcAddress("eglGetPlatformDisplayEXT"));
      if (egl.QueryDevicesEXT != nullptr && egl.GetPlatformDisplayEXT != nullptr) {
        EGLint count = 0;
        if (egl.QueryDevicesEXT(0, nullptr, &count) && count > 0) {
          std::vector<EGLDeviceEXT> devices(static_cast<std::size_t>(count));
          egl.QueryDevicesEXT(count, devices.data(), &count);
          for (EGLint i = 0; i < count && egl.display == nullptr; ++i) {
            EGLDisplay d = egl.GetPlatformDisplayEXT(kEglPlatformDeviceExt, devices[i], nullptr);
            if (d != nullptr && egl.GetError() == kEglSuccess && egl.Initialize(d, nullptr, nullptr) &&
                egl.GetError() == kEglSuccess) {
              egl.display = d;
            }
          }
        }
      }
      if (egl.display == nullptr) {
        EGLDisplay d = egl.GetDisplay(nullptr);
        if (d != nullptr && egl.Initialize(d, nullptr, nullptr)) egl.display = d;
      }
      if (egl.display == nullptr) {
        throw StateError(std::string("EGL found no display to render on (no device display, no default "
                                     "display); ") + kPackages);
      }
    } catch (const std::exception& e) {
      egl.error = e.what();
    }
  });
  if (!egl.error.empty()) throw StateError(egl.error);
  return egl;
}

// Makes `context` current on this thread for a scope, then releases it (so
// another thread may render the same world later).
class Current {
 public:
  Current(Egl& egl, EGLContext context) : egl_(egl) {
    if (!egl.MakeCurrent(egl.display, nullptr, nullptr, context)) {
      throw StateError("eglMakeCurrent failed (EGL error 0x" + Hex(egl.GetError()) +
                       "): cannot render on this thread");
    }
  }
  ~Current() { egl_.MakeCurrent(egl_.display, nullptr, nullptr, nullptr); }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;

  static std::string Hex(EGLint value) {
    char text[16];
    std::snprintf(text, sizeof text, "%x", static_cast<unsigned>(value));
    return text;
  }

 private:
  Egl& egl_;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (n == 0) return 0.0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace

CameraConfig DefaultCameraConfig(const std::string& task) {
  CameraConfig c;
  auto track = [&](int body, double distance, double z, double elevation) {
    c.has_trackbodyid = true;
    c.trackbodyid = body;
    c.has_distance = true;
    c.distance = distance;
    c.has_lookat = true;
    c.lookat[2] = z;
    c.has_elevation = true;
    c.elevation = elevation;
  };
  if (task == "ant" || task == "half_cheetah") {
    c.has_distance = true;
    c.distance = 4.0;
  } else if (task == "hopper") {
    track(2, 3.0, 1.15, -20.0);
  } else if (task == "humanoid") {
    track(1, 4.0, 2.0, -20.0);
  } else if (task == "humanoid_standup") {
    track(1, 4.0, 0.8925, -20.0);
  } else if (task == "walker2d") {
    track(2, 4.0, 1.15, -20.0);
  } else if (task == "inverted_pendulum") {
    c.has_trackbodyid = true;
    c.trackbodyid = 0;
    c.has_distance = true;
    c.distance = 2.04;
  } else if (task == "pusher") {
    c.has_trackbodyid = true;
    c.trackbodyid = -1;
    c.has_distance = true;
    c.distance = 4.0;
  } else if (task == "reacher") {
    c.has_trackbodyid = true;
    c.trackbodyid = 0;
  }
  return c;
}

struct FrameRenderer::Gl {
  Egl* egl = nullptr;
  EGLContext context = nullptr;
};

FrameRenderer::FrameRenderer(const mjModel* model, const std::string& task, int width, int height,
                             int camera_id, const std::string& camera_name)
    : gl_(new Gl), width_(width), height_(height), camera_id_(camera_id), camera_name_(camera_name) {
  if (width < 1 || width > 16384 || height < 1 || height > 16384) {
    throw BadValue("width and height should be ints in [1, 16384], got " + std::to_string(width) + " and " +
                   std::to_string(height));
  }
  if (camera_id >= 0 && !camera_name.empty()) {
    throw BadValue("camera_id and camera_name cannot both be given; got " + std::to_string(camera_id) + " and '" +
                   camera_name + "'");
  }
  if (camera_id < -1 || camera_id >= model->ncam) {
    throw BadValue("camera_id should be -1 (the free camera) or in [0, " + std::to_string(model->ncam) +
                   ") (the model's cameras), got " + std::to_string(camera_id));
  }
  resolved_camera_ = camera_id;
  if (!camera_name.empty()) {
    resolved_camera_ = mj_name2id(model, mjOBJ_CAMERA, camera_name.c_str());
    if (resolved_camera_ < 0) {
      std::string names;
      for (int i = 0; i < model->ncam; ++i) {
        names += std::string(i ? ", '" : "'") + (model->names + model->name_camadr[i]) + "'";
      }
      throw BadValue("camera_name should be one of the model's cameras (" + (names.empty() ? "none" : names) +
                     "), got '" + camera_name + "'");
    }
  }
  config_ = DefaultCameraConfig(task);

  Egl& egl = OpenEgl();
  gl_->egl = &egl;
  EGLConfig config = nullptr;
  EGLint num_configs = 0;
  egl.ReleaseThread();
  egl.ChooseConfig(egl.display, kConfigAttributes, &config, 1, &num_configs);
  if (num_configs < 1) throw StateError("EGL has no framebuffer configuration for rendering; " + std::string(kPackages));
  egl.BindAPI(kEglOpenGlApi);
  gl_->context = egl.CreateContext(egl.display, config, nullptr, nullptr);
  if (gl_->context == nullptr) {
    throw StateError("eglCreateContext failed (EGL error 0x" + Current::Hex(egl.GetError()) + ")");
  }

  MujocoReport report;
  mjModel* copy = nullptr;
  mjData* data = nullptr;
  const bool ok = GuardMujoco(
      [&] {
        copy = mj_copyModel(nullptr, model);
        // As MujocoEnv: grow (never shrink) the offscreen buffer to the frame.
        copy->vis.global.offwidth = std::max(copy->vis.global.offwidth, width);
        copy->vis.global.offheight = std::max(copy->vis.global.offheight, height);
        data = mj_makeData(copy);
      },
      &report);
  model_ = copy;
  data_ = data;
  if (!ok) throw StateError("MuJoCo could not copy the model for rendering: " + report.error_message);

  Current current(egl, gl_->context);
  mjv_defaultCamera(&camera_);
  mjv_defaultOption(&option_);
  mjv_defaultPerturb(&perturb_);
  mjv_defaultScene(&scene_);
  mjr_defaultContext(&context_);
  const bool made = GuardMujoco(
      [&] {
        mjv_makeScene(model_, &scene_, 1000);  // MujocoRenderer's max_geom
        scene_made_ = true;
        mjr_makeContext(model_, &context_, mjFONTSCALE_150);
        context_made_ = true;
        mjr_setBuffer(mjFB_OFFSCREEN, &context_);
      },
      &report);
  if (!made) throw StateError("MuJoCo could not make a rendering context: " + report.error_message);
}

FrameRenderer::~FrameRenderer() {
  if (gl_->egl != nullptr && gl_->context != nullptr) {
    try {
      Current current(*gl_->egl, gl_->context);
      if (context_made_) mjr_freeContext(&context_);
    } catch (const std::exception&) {
      // Not current: the context's own resources go with it below.
    }
    if (scene_made_) mjv_freeScene(&scene_);
    gl_->egl->DestroyContext(gl_->egl->display, gl_->context);
  } else if (scene_made_) {
    mjv_freeScene(&scene_);
  }
  if (data_ != nullptr) mj_deleteData(data_);
  if (model_ != nullptr) mj_deleteModel(model_);
}

bool FrameRenderer::Matches(int width, int height, int camera_id, const std::string& camera_name) const {
  return width == width_ && height == height_ && camera_id == camera_id_ && camera_name == camera_name_;
}

void FrameRenderer::Render(const mjData* data, std::uint8_t* rgb) {
  Current current(*gl_->egl, gl_->context);
  MujocoReport report;
  std::vector<std::uint8_t> flipped(static_cast<std::size_t>(width_) * height_ * 3);
  std::vector<double> axis(static_cast<std::size_t>(model_->ngeom));
  const bool ok = GuardMujoco(
      [&] {
        mj_copyData(data_, model_, data);
        if (!camera_ready_) {
          // OffScreenViewer._init_camera, then MujocoRenderer._set_cam_config.
          camera_.type = mjCAMERA_FREE;
          camera_.fixedcamid = -1;
          for (int i = 0; i < 3; ++i) {
            for (int g = 0; g < model_->ngeom; ++g) axis[static_cast<std::size_t>(g)] = data_->geom_xpos[3 * g + i];
            camera_.lookat[i] = Median(axis);
          }
          camera_.distance = model_->stat.extent;
          if (config_.has_trackbodyid) camera_.trackbodyid = config_.trackbodyid;
          if (config_.has_distance) camera_.distance = config_.distance;
          if (config_.has_lookat) std::memcpy(camera_.lookat, config_.lookat, sizeof camera_.lookat);
          if (config_.has_elevation) camera_.elevation = config_.elevation;
          if (config_.has_azimuth) camera_.azimuth = config_.azimuth;
          camera_ready_ = true;
        }
        // OffScreenViewer.render(camera_id=...).
        camera_.type = resolved_camera_ == -1 ? mjCAMERA_FREE : mjCAMERA_FIXED;
        camera_.fixedcamid = resolved_camera_;
        mjv_updateScene(model_, data_, &option_, &perturb_, &camera_, mjCAT_ALL, &scene_);
        const mjrRect viewport{0, 0, width_, height_};
        mjr_render(viewport, &scene_, &context_);
        mjr_readPixels(flipped.data(), nullptr, viewport, &context_);
      },
      &report);
  if (!ok) throw StateError("MuJoCo failed to render: " + report.error_message);
  // OpenGL's rows run bottom-up; Python flips them (rgb[::-1]).
  const std::size_t row = static_cast<std::size_t>(width_) * 3;
  for (int y = 0; y < height_; ++y) {
    std::memcpy(rgb + static_cast<std::size_t>(y) * row,
                flipped.data() + static_cast<std::size_t>(height_ - 1 - y) * row, row);
  }
}

}  // namespace joltgym::capi
