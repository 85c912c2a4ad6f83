// What Humanoid and HumanoidStandup share, as Gymnasium's Humanoid-v5 and
// HumanoidStandup-v5 do: the humanoid's free root, its observation (qpos[2:],
// qvel, then the cinert[1:], cvel[1:], qfrc_actuator[6:] and cfrc_ext[1:]
// blocks that the include_*_in_observation keyword arguments keep) and its
// tendon_length / tendon_velocity info fields.
#pragma once

#include <vector>

#include "locomotion.h"

namespace joltgym {

class HumanoidBody : public LocomotionTask {
 public:
  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    obs = PutQposQvel(obs, d, skip_);
    if (cinert_) obs = Put(obs, d->cinert + 10, 10 * (m->nbody - 1));
    if (cvel_) obs = Put(obs, d->cvel + 6, 6 * (m->nbody - 1));
    if (qfrc_) obs = Put(obs, d->qfrc_actuator + 6, m->nv - 6);
    if (cfrc_) Put(obs, d->cfrc_ext + 6, 6 * (m->nbody - 1));
  }

  // Appends the include_*_in_observation keyword arguments to a task's spec.
  static void AddObservationParams(std::vector<ParamSpec>& spec) {
    spec.push_back(BoolParam("include_cinert_in_observation", true, "append cinert[1:]"));
    spec.push_back(BoolParam("include_cvel_in_observation", true, "append cvel[1:]"));
    spec.push_back(
        BoolParam("include_qfrc_actuator_in_observation", true, "append qfrc_actuator[6:]"));
    spec.push_back(BoolParam("include_cfrc_ext_in_observation", true, "append cfrc_ext[1:]"));
  }

 protected:
  // Loads the model, checks its free root (`robot` names the task in the
  // error), reads the observation's keyword arguments and sets the
  // dimensions and action bounds.
  HumanoidBody(const Params& p, const char* robot) : LocomotionTask(p) {
    RequireRoot(mjJNT_FREE, robot);
    const mjModel* m = model();
    cinert_ = p.Bool("include_cinert_in_observation");
    cvel_ = p.Bool("include_cvel_in_observation");
    qfrc_ = p.Bool("include_qfrc_actuator_in_observation");
    cfrc_ = p.Bool("include_cfrc_ext_in_observation");
    skip_ = exclude_positions_ ? 2 : 0;
    const int bodies = m->nbody - 1;
    const int dim = m->nq - skip_ + m->nv + (cinert_ ? 10 * bodies : 0) + (cvel_ ? 6 * bodies : 0) +
                    (qfrc_ ? m->nv - 6 : 0) + (cfrc_ ? 6 * bodies : 0);
    SetDims(1, dim, m->nu);
    SetActionBoundsFromCtrlRange(0);
  }

  // Adds tendon_length and tendon_velocity ([ntendon] each), reported on
  // reset and on every step.
  void AddTendonInfo(InfoLayout& info) {
    tendon_length_ = info.AddAtReset("tendon_length", model()->ntendon);
    tendon_velocity_ = info.AddAtReset("tendon_velocity", model()->ntendon);
  }

  void WriteTendonInfo(const mjData* d, double* info) const {
    const int nt = model()->ntendon;
    for (int i = 0; i < nt; ++i) info[tendon_length_ + i] = d->ten_length[i];
    for (int i = 0; i < nt; ++i) info[tendon_velocity_ + i] = d->ten_velocity[i];
  }

 private:
  bool cinert_, cvel_, qfrc_, cfrc_;
  int skip_;
  int tendon_length_, tendon_velocity_;  // info offsets
};

}  // namespace joltgym
