// Shared pieces of the single-robot locomotion tasks that mirror Gymnasium's
// MuJoCo `*-v5` environments: their common keyword arguments, reset-noise
// rule, observation helpers and position info fields.
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <string>
#include <vector>

#include "../errors.h"
#include "../params.h"
#include "../rng.h"
#include "../task.h"

namespace joltgym {

enum class VelocityNoise { kUniform, kNormal };

// The keyword arguments of every MuJoCo task: its model file and frame skip
// (Gymnasium's defaults for the task).
inline std::vector<ParamSpec> ModelParams(const std::string& xml_file, int frame_skip) {
  return {
      StringParam("xml_file", xml_file, "MJCF file: a bare name is looked up in the assets"),
      IntParam("frame_skip", frame_skip, "mj_step calls per env step", 1, kMaxFrameSkip),
  };
}

// Keyword arguments the locomotion tasks share, with the task's defaults.
inline std::vector<ParamSpec> LocomotionParams(const std::string& xml_file,
                                               double reset_noise_scale, int frame_skip = 5) {
  auto spec = ModelParams(xml_file, frame_skip);
  spec.push_back(FloatParam("reset_noise_scale", reset_noise_scale, "scale of the reset noise"));
  spec.push_back(BoolParam("exclude_current_positions_from_observation", true,
                           "drop the root's world x (and y) position from the observation"));
  return spec;
}

// np.clip(v, -limit, limit): a NaN stays NaN.
inline double NpClip(double v, double limit) {
  return v < -limit ? -limit : (v > limit ? limit : v);
}

// np.linalg.norm(a - b) for two 3-vectors (world positions), as NumPy computes it.
inline double Distance(const mjtNum* a, const mjtNum* b) {
  mjtNum v[3];
  mju_sub3(v, a, b);
  return NumpyNorm(v, 3);
}

// The info fields of the root's position in the ground plane, reported on
// reset and on every step: x_position and y_position (qpos[0], qpos[1]) and
// distance_from_origin, the norm of the two.
struct XYPositionInfo {
  // Adds the three fields in that order (Ant, Swimmer).
  void Add(InfoLayout& info) {
    AddXY(info);
    AddDistance(info);
  }
  // Adds them apart, for a task that reports other fields in between.
  void AddXY(InfoLayout& info) {
    x_position = info.AddAtReset("x_position");
    y_position = info.AddAtReset("y_position");
  }
  void AddDistance(InfoLayout& info) {
    distance_from_origin = info.AddAtReset("distance_from_origin");
  }

  void Write(const mjData* d, double* info) const {
    info[x_position] = d->qpos[0];
    info[y_position] = d->qpos[1];
    if (distance_from_origin >= 0) {
      info[distance_from_origin] = NumpyNorm(d->qpos, 2);  // np.linalg.norm(qpos[0:2])
    }
  }

  int x_position = -1, y_position = -1;  // info offsets
  int distance_from_origin = -1;         // -1: not reported (HumanoidStandup)
};

class LocomotionTask : public Task {
 protected:
  // Loads the model and reads the shared keyword arguments; a task that does
  // not declare reset_noise_scale or exclude_current_positions_from_observation
  // (ModelParams only) gets 0 and false.
  explicit LocomotionTask(const Params& params) {
    SetModel(LoadModel(ResolveAssetPath(params.String("xml_file"))));
    frame_skip_ = params.Int("frame_skip");
    if (frame_skip_ < 1) {
      throw BadValue("frame_skip should be >= 1, got " + std::to_string(frame_skip_));
    }
    noise_scale_ = params.Has("reset_noise_scale") ? params.Float("reset_noise_scale") : 0.0;
    if (!(noise_scale_ >= 0.0)) {
      throw BadValue("reset_noise_scale should be >= 0, got " + std::to_string(noise_scale_));
    }
    exclude_positions_ = params.Has("exclude_current_positions_from_observation") &&
                         params.Bool("exclude_current_positions_from_observation");
    mutable_info().SetDefaultScalar(InfoScalar::kFloat64);  // v5's info values are NumPy scalars
    SetFrameSkip(frame_skip_);
  }

  // Checks that the model has what the task reads: a root joint of `root`
  // type first (free for Ant/Humanoid, the x slide for HalfCheetah) and at
  // least one actuator. A custom xml_file that lacks them is rejected here
  // rather than read out of bounds later.
  void RequireRoot(mjtJoint root, const char* robot) const {
    const mjModel* m = model();
    const bool ok = m->njnt >= 1 && m->jnt_type[0] == root && m->jnt_bodyid[0] == 1 && m->nu >= 1;
    if (!ok) {
      static const char* const kNames[] = {"free", "ball", "slide", "hinge"};
      auto name = [](int type) { return type >= 0 && type < 4 ? kNames[type] : "unknown"; };
      std::string found = m->njnt == 0 ? std::string("no joints")
                                       : std::string("a ") + name(m->jnt_type[0]) +
                                             " joint first (in body " +
                                             std::to_string(m->jnt_bodyid[0]) + ")";
      throw BadValue(std::string(robot) + " model should have a " + name(root) +
                     " joint as the first joint, in the first body, and at least one actuator; got " +
                     found + " and " + std::to_string(m->nu) + " actuator(s)");
    }
  }

  // mj_resetData, uniform noise on qpos, `velocity` noise on qvel, mj_forward:
  // Gymnasium's reset sequence.
  void ResetWithNoise(mjData* d, Rng& rng, VelocityNoise velocity) const {
    const mjModel* m = model();
    mj_resetData(m, d);
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + rng.Uniform(-noise_scale_, noise_scale_);
    for (int i = 0; i < m->nv; ++i) {
      d->qvel[i] = velocity == VelocityNoise::kUniform ? rng.Uniform(-noise_scale_, noise_scale_)
                                                       : noise_scale_ * rng.StandardNormal();
    }
    mj_forward(m, d);
  }

  // ctrl <- action (float32 widened exactly, unclipped: MuJoCo clamps to
  // ctrlrange), then the physics step. Returns false on instability.
  bool Advance(mjData* d, const float* action) const {
    for (int i = 0; i < act_dim(); ++i) d->ctrl[i] = action[i];
    return Simulate(model(), d, frame_skip_);
  }

  // Every qpos and qvel finite (Gymnasium's np.isfinite(state_vector()).all()).
  bool StateIsFinite(const mjData* d) const {
    const mjModel* m = model();
    for (int i = 0; i < m->nq; ++i) {
      if (!std::isfinite(d->qpos[i])) return false;
    }
    for (int i = 0; i < m->nv; ++i) {
      if (!std::isfinite(d->qvel[i])) return false;
    }
    return true;
  }

  static double* Put(double* out, const mjtNum* values, int count) {
    for (int i = 0; i < count; ++i) out[i] = values[i];
    return out + count;
  }

  // qpos[skip:] (without the `skip` root positions the observation excludes),
  // then qvel: the head of most observations. Returns the end.
  double* PutQposQvel(double* obs, const mjData* d, int skip) const {
    obs = Put(obs, d->qpos + skip, model()->nq - skip);
    return Put(obs, d->qvel, model()->nv);
  }

  int frame_skip_ = 5;
  double noise_scale_ = 0.0;
  bool exclude_positions_ = true;
};

}  // namespace joltgym
