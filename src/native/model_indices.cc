#include "model_indices.h"

namespace joltgym {

namespace {

struct IndexField {
  const char* name;
  const int* values;
  long long count;
  long long low, high;  // inclusive
};

}  // namespace

std::string FirstBadIndex(const mjModel* m) {
  const IndexField fields[] = {
      {"geom_type", m->geom_type, m->ngeom, 0, mjNGEOMTYPES - 1},
      {"body_treeid", m->body_treeid, m->nbody, -1, m->ntree - 1},
      {"dof_treeid", m->dof_treeid, m->nv, 0, m->ntree - 1},
      {"jnt_actuatorid", m->jnt_actuatorid, m->njnt, -1, m->nu - 1},
      {"mat_texid", m->mat_texid, static_cast<long long>(m->nmat) * mjNTEXROLE, -1, m->ntex - 1},
      {"light_texid", m->light_texid, m->nlight, -1, m->ntex - 1},
      {"light_type", m->light_type, m->nlight, 0, mjLIGHT_IMAGE},
      {"light_mode", m->light_mode, m->nlight, 0, mjCAMLIGHT_TARGETBODYCOM},
      {"cam_mode", m->cam_mode, m->ncam, 0, mjCAMLIGHT_TARGETBODYCOM},
      {"tex_type", m->tex_type, m->ntex, 0, mjTEXTURE_SKYBOX},
  };
  for (const IndexField& f : fields) {
    for (long long i = 0; i < f.count; ++i) {
      const int v = f.values[i];
      if (v < f.low || v > f.high) {
        return "model." + std::string(f.name) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
               "; expected " + std::to_string(f.low) + " to " + std::to_string(f.high);
      }
    }
  }
  // A mesh or height field geom's data id names one of those.
  for (long long g = 0; g < m->ngeom; ++g) {
    const int type = m->geom_type[g], id = m->geom_dataid[g];
    const long long count = type == mjGEOM_HFIELD ? m->nhfield
                      : type == mjGEOM_MESH ? m->nmesh
                                                                     : -1;
    if (count >= 0 && (id < 0 || id >= count)) {
      return "model.geom_dataid[" + std::to_string(g) + "] = " + std::to_string(id) + "; expected 0 to " +
             std::to_string(count - 1) + " for its geom_type " + std::to_string(type);
    }
  }
  return "";
}

}  // namespace joltgym
