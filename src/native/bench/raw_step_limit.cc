// The engine's limit: N mjData stepped on T threads with no Python at all.
//
//   raw_step_limit --task half_cheetah --worlds 64 --threads 2 --steps 2000
//                  --mode mj_step|env --assets DIR [--actions FILE]
//                  [--param name=value ...]
//
// --param sets one of the task's keyword arguments (numbers, true/false, or
// text), e.g. --param num_agents=4 for a four-cheetah race.
// FILE holds float32 actions [16, worlds, num_agents, act_dim], cycled over
// the steps (the Python side of a benchmark writes the very actions it feeds
// the pool, so both run the same trajectories: physics cost depends on the
// state). Without it, actions are drawn uniformly in [-1, 1].
// mode mj_step: per env step, set ctrl and call mj_step frame_skip times
//               (the bare physics).
// mode env:     per env step, the whole task step (ctrl, frame skip,
//               mj_rnePostConstraint, observation, reward, truncation and
//               resets into buffers), through World, as the pool does.
// Threads run free over a static share of the worlds (no per-step barrier),
// so this is an upper bound for any batched stepping scheme.
// Prints one JSON object with env_steps_per_sec.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rng.h"
#include "task.h"
#include "world.h"

namespace {

struct Options {
  std::string task = "half_cheetah";
  std::string mode = "mj_step";
  std::string assets;
  std::string actions;
  std::map<std::string, joltgym::ParamValue> params;
  int worlds = 64;
  int threads = 2;
  int steps = 1000;
};

// name=value: a number (or true/false) becomes a number, anything else text.
void AddParam(Options& o, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    std::fprintf(stderr, "--param expects name=value, got %s\n", assignment.c_str());
    std::exit(2);
  }
  const std::string name = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  joltgym::ParamValue value;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text == "true" || text == "false") {
    value.numbers = {text == "true" ? 1.0 : 0.0};
  } else if (!text.empty() && end != nullptr && *end == '\0') {
    value.numbers = {number};
  } else {
    value.text = text;
    value.is_text = true;
  }
  o.params[name] = value;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--task") o.task = value;
    else if (key == "--mode") o.mode = value;
    else if (key == "--assets") o.assets = value;
    else if (key == "--actions") o.actions = value;
    else if (key == "--param") AddParam(o, value);
    else if (key == "--worlds") o.worlds = std::atoi(value);
    else if (key == "--threads") o.threads = std::atoi(value);
    else if (key == "--steps") o.steps = std::atoi(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

constexpr int kActionSets = 16;

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  if (!o.assets.empty()) joltgym::SetAssetDir(o.assets);
  const auto& info = joltgym::TaskRegistry::Get().Find(o.task);
  const auto task = info.factory(joltgym::Params(info.params, o.params));
  const mjModel* m = task->model();
  const int frame_skip = static_cast<int>(task->dt() / m->opt.timestep + 0.5);
  const int act = task->num_agents() * task->act_dim();

  // Pre-drawn actions, cycled, so both modes see the same kind of motion.
  joltgym::Rng rng(12345);
  std::vector<float> actions(static_cast<size_t>(kActionSets) * o.worlds * act);
  for (auto& a : actions) a = static_cast<float>(rng.Uniform(-1.0, 1.0));
  if (!o.actions.empty()) {
    std::FILE* file = std::fopen(o.actions.c_str(), "rb");
    const size_t got = file ? std::fread(actions.data(), sizeof(float), actions.size(), file) : 0;
    if (file) std::fclose(file);
    if (got != actions.size()) {
      std::fprintf(stderr, "could not read %zu float32 actions from %s\n", actions.size(),
                   o.actions.c_str());
      return 2;
    }
  }

  std::vector<std::unique_ptr<joltgym::World>> worlds;
  const int obs_width = task->num_agents() * task->obs_dim();
  const int info_width = task->num_agents() * task->info_layout().width();
  std::vector<float> obs(static_cast<size_t>(o.worlds) * obs_width);
  std::vector<double> infos(static_cast<size_t>(o.worlds) * info_width);
  for (int i = 0; i < o.worlds; ++i) {
    worlds.push_back(std::make_unique<joltgym::World>(task, 1000));
    worlds.back()->Seed(static_cast<std::uint64_t>(i));
    worlds.back()->Reset(obs.data() + i * obs_width, infos.data() + i * info_width);
  }

  auto run_share = [&](int begin, int end) {
    float reward[16];
    bool term[16], trunc[16];
    for (int t = 0; t < o.steps; ++t) {
      const float* step_actions = actions.data() + static_cast<size_t>(t % kActionSets) * o.worlds * act;
      for (int i = begin; i < end; ++i) {
        const float* a = step_actions + i * act;
        joltgym::World& w = *worlds[i];
        if (o.mode == "mj_step") {
          mjData* d = const_cast<mjData*>(w.data());
          for (int j = 0; j < act; ++j) d->ctrl[j] = a[j];
          for (int k = 0; k < frame_skip; ++k) mj_step(m, d);
        } else {
          float* ob = obs.data() + i * obs_width;
          double* in = infos.data() + i * info_width;
          if (w.Step(a, ob, reward, term, trunc, in)) w.Reset(ob, in);
        }
      }
    }
  };

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  const int t_count = std::max(1, std::min(o.threads, o.worlds));
  for (int t = 0; t < t_count; ++t) {
    const int begin = o.worlds * t / t_count, end = o.worlds * (t + 1) / t_count;
    threads.emplace_back(run_share, begin, end);
  }
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "{\"task\": \"%s\", \"mode\": \"%s\", \"worlds\": %d, \"threads\": %d, \"steps\": %d, "
      "\"seconds\": %.6f, \"env_steps_per_sec\": %.1f}\n",
      o.task.c_str(), o.mode.c_str(), o.worlds, t_count, o.steps, seconds,
      static_cast<double>(o.steps) * o.worlds / seconds);
  return 0;
}
