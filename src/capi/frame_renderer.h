// RGB frames of a world without Python: MuJoCo's own renderer (mjv/mjr) in a
// headless EGL context, set up as Gymnasium's MujocoRenderer /
// OffScreenViewer set it up in Python (MUJOCO_GL=egl), so a frame is equal
// pixel for pixel to `env.render()` with render_mode="rgb_array" for the
// same state.
//
// EGL is not needed to build: libEGL.so.1 (and libOpenGL.so.0 or
// libGL.so.1, where MuJoCo looks up the GL functions) are opened with
// dlopen on the first frame, and the few EGL prototypes are declared here.
// A machine without them gets a clear error (a StateError naming the missing
// library and the Debian packages that have it), never a crash.
#pragma once

#include <mujoco/mujoco.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace joltgym::capi {

// The camera as Python takes it: the v5 env's default free camera (config
// below), a model camera by id (camera_id >= 0) or by name.
struct CameraConfig {
  bool has_distance = false;
  double distance = 0;
  bool has_elevation = false;
  double elevation = 0;
  bool has_azimuth = false;
  double azimuth = 0;
  bool has_lookat = false;
  double lookat[3] = {0, 0, 0};
  bool has_trackbodyid = false;
  int trackbodyid = -1;
};

// The v5 env's default_camera_config of a single-agent task
// (joltgym_marl/envs/mujoco_env.py's DEFAULT_CAMERA_CONFIGS), or none.
CameraConfig DefaultCameraConfig(const std::string& task);

// One world's renderer: an EGL context, copies of the model (its offscreen
// buffer grown to the frame, as MujocoEnv does) and of the data, MuJoCo's
// scene, camera and render context. The camera is set up on the first frame
// from the state then (the median of the geoms' positions, as
// OffScreenViewer's), so a renderer kept across steps frames like Python's.
class FrameRenderer {
 public:
  // Throws BadValue for a bad size or camera, StateError when EGL or OpenGL
  // is missing or refuses a context.
  FrameRenderer(const mjModel* model, const std::string& task, int width, int height,
                int camera_id, const std::string& camera_name);
  ~FrameRenderer();
  FrameRenderer(const FrameRenderer&) = delete;
  FrameRenderer& operator=(const FrameRenderer&) = delete;

  bool Matches(int width, int height, int camera_id, const std::string& camera_name) const;

  // Renders `data`'s state (copied first; the world is untouched) into `rgb`
  // (height rows of width * 3 bytes, top row first).
  void Render(const mjData* data, std::uint8_t* rgb);

 private:
  struct Gl;
  std::unique_ptr<Gl> gl_;
  int width_, height_, camera_id_;
  std::string camera_name_;
  int resolved_camera_ = -1;
  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
  bool camera_ready_ = false;
  CameraConfig config_;
  mjvScene scene_;
  mjvCamera camera_;
  mjvOption option_;
  mjvPerturb perturb_;
  mjrContext context_;
  bool scene_made_ = false;
  bool context_made_ = false;
};

}  // namespace joltgym::capi
