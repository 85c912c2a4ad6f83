// The engine's limit: N worlds of any registered task stepped on T threads
// with no Python at all.
//
//   raw_step_limit --task NAME [--worlds 64] [--threads 2] [--steps 1000]
//                  [--mode mj_step|env] [--assets DIR] [--actions FILE]
//                  [--param name=value ...] [--max-episode-steps N]
//                  [--warmup-steps W]
//   raw_step_limit --list      (the registered tasks, one "name kind" a line)
//   raw_step_limit --help
//
// --task takes any name of the native task registry (single-agent robots and
// shared-world games alike; the default is the registry's first task).
// --param sets one of the task's keyword arguments (numbers, true/false, or
// text), e.g. --param num_agents=4 for a four-cheetah race.
// --max-episode-steps: truncation, default the task's registered limit (as
// the pool and the vector env use it); 0 disables it.
// --warmup-steps: steps every world takes before the clock starts (default
// 0), so that the timed steps see the states of a long run rather than the
// first steps after reset (in the humanoid games, standing humanoids before
// their first fall cost less than the mix of a long run).
// FILE holds float32 actions [16, worlds, num_agents, act_dim], cycled over
// the steps (the Python side of a benchmark writes the very actions it feeds
// the pool, so both run the same trajectories: physics cost depends on the
// state). Without it, actions are drawn uniformly in the action bounds.
// mode mj_step: per env step, set ctrl and call mj_step frame_skip times
//               (the bare physics).
// mode env:     per env step, the whole task step (ctrl, frame skip,
//               mj_rnePostConstraint, observation, reward, truncation and
//               resets into buffers), through World, as the pool does.
// Threads run free over a static share of the worlds (no per-step barrier),
// so this is an upper bound for any batched stepping scheme.
// Prints one JSON object with env_steps_per_sec (world steps per second) and
// agent_steps_per_sec (times the number of agents per world).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rng.h"
#include "task.h"
#include "world.h"

namespace {

constexpr const char* kUsage =
    "usage: raw_step_limit --task NAME [--worlds N] [--threads T] [--steps S]\n"
    "                      [--mode mj_step|env] [--assets DIR] [--actions FILE]\n"
    "                      [--param name=value ...] [--max-episode-steps N]\n"
    "                      [--warmup-steps W]\n"
    "       raw_step_limit --list | --help\n";

struct Options {
  std::string task;  // empty: the registry's first task
  std::string mode = "mj_step";
  std::string assets;
  std::string actions;
  std::map<std::string, joltgym::ParamValue> params;
  int worlds = 64;
  int threads = 2;
  int steps = 1000;
  int max_episode_steps = -1;  // -1: the task's registered limit
  int warmup_steps = 0;
  bool list = false;
};

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "raw_step_limit: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

// name=value: a number (or true/false) becomes a number, anything else text.
void AddParam(Options& o, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) Fail("--param expects name=value, got " + assignment);
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

int PositiveInt(const std::string& key, const char* text, int minimum) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum || value > (1L << 30)) {
    Fail(key + " expects an integer >= " + std::to_string(minimum) + ", got " + text);
  }
  return static_cast<int>(value);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--help" || key == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (key == "--list") {
      o.list = true;
      continue;
    }
    if (i + 1 >= argc) Fail(key + " expects a value");
    const char* value = argv[++i];
    if (key == "--task") o.task = value;
    else if (key == "--mode") o.mode = value;
    else if (key == "--assets") o.assets = value;
    else if (key == "--actions") o.actions = value;
    else if (key == "--param") AddParam(o, value);
    else if (key == "--worlds") o.worlds = PositiveInt(key, value, 1);
    else if (key == "--threads") o.threads = PositiveInt(key, value, 1);
    else if (key == "--steps") o.steps = PositiveInt(key, value, 1);
    else if (key == "--max-episode-steps") o.max_episode_steps = PositiveInt(key, value, 0);
    else if (key == "--warmup-steps") o.warmup_steps = PositiveInt(key, value, 0);
    else Fail("unknown option " + key);
  }
  if (o.mode != "mj_step" && o.mode != "env") Fail("--mode expects mj_step or env, got " + o.mode);
  return o;
}

constexpr int kActionSets = 16;

int Run(const Options& o) {
  const auto& registry = joltgym::TaskRegistry::Get().all();
  if (o.list) {
    for (const auto& [name, info] : registry) {
      std::printf("%s %s\n", name.c_str(),
                  info.kind == joltgym::TaskKind::kGame ? "game" : "single_agent");
    }
    return 0;
  }
  if (registry.empty()) Fail("no task is registered");
  if (!o.assets.empty()) joltgym::SetAssetDir(o.assets);
  const std::string name = o.task.empty() ? registry.begin()->first : o.task;
  const auto& info = joltgym::TaskRegistry::Get().Find(name);
  // As the bindings do: the task knows its episode limit before it is shared.
  if (o.warmup_steps > (1 << 30) - o.steps) Fail("--warmup-steps plus --steps should be <= 2^30");
  const int limit = o.max_episode_steps >= 0 ? o.max_episode_steps : info.max_episode_steps;
  auto mutable_task =
      std::const_pointer_cast<joltgym::Task>(info.factory(joltgym::Params(info.params, o.params)));
  mutable_task->SetEpisodeLimit(limit);
  const std::shared_ptr<const joltgym::Task> task = mutable_task;
  const mjModel* m = task->model();
  const int frame_skip = static_cast<int>(task->dt() / m->opt.timestep + 0.5);
  const int agents = task->num_agents(), act_dim = task->act_dim();
  const int act = agents * act_dim;

  // Pre-drawn actions, cycled, so both modes see the same kind of motion.
  joltgym::Rng rng(12345);
  std::vector<float> actions(static_cast<size_t>(kActionSets) * o.worlds * act);
  for (size_t i = 0; i < actions.size(); ++i) {
    const size_t j = i % act_dim;
    const auto& lows = task->action_low();
    const auto& highs = task->action_high();
    const double low = j < lows.size() ? lows[j] : -1.0, high = j < highs.size() ? highs[j] : 1.0;
    const bool bounded = std::isfinite(low) && std::isfinite(high);
    actions[i] = static_cast<float>(bounded ? rng.Uniform(low, high) : rng.Uniform(-1.0, 1.0));
  }
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
  const size_t obs_width = static_cast<size_t>(agents) * task->obs_dim();
  const size_t info_width = static_cast<size_t>(agents) * task->info_layout().width();
  std::vector<double> obs(static_cast<size_t>(o.worlds) * obs_width);
  std::vector<double> infos(static_cast<size_t>(o.worlds) * info_width);
  for (int i = 0; i < o.worlds; ++i) {
    worlds.push_back(std::make_unique<joltgym::World>(task, limit));
    worlds.back()->Seed(static_cast<std::uint64_t>(i));
    worlds.back()->Reset(obs.data() + i * obs_width, infos.data() + i * info_width);
  }

  // Steps [first, last) of the worlds [begin, end).
  auto run_share = [&](int begin, int end, int first, int last) {
    std::vector<double> reward(agents);
    std::unique_ptr<bool[]> term(new bool[agents]), trunc(new bool[agents]);
    for (int t = first; t < last; ++t) {
      const float* step_actions =
          actions.data() + static_cast<size_t>(t % kActionSets) * o.worlds * act;
      for (int i = begin; i < end; ++i) {
        const float* a = step_actions + static_cast<size_t>(i) * act;
        joltgym::World& w = *worlds[i];
        if (o.mode == "mj_step") {
          mjData* d = const_cast<mjData*>(w.data());
          for (int j = 0; j < act; ++j) d->ctrl[j] = a[j];
          for (int k = 0; k < frame_skip; ++k) mj_step(m, d);
        } else {
          double* ob = obs.data() + i * obs_width;
          double* in = infos.data() + i * info_width;
          if (w.Step(a, ob, reward.data(), term.get(), trunc.get(), in)) w.Reset(ob, in);
        }
      }
    }
  };

  const int t_count = std::max(1, std::min(o.threads, o.worlds));
  auto run_all = [&](int first, int last) {
    std::vector<std::thread> threads;
    for (int t = 0; t < t_count; ++t) {
      const int begin = o.worlds * t / t_count, end = o.worlds * (t + 1) / t_count;
      threads.emplace_back(run_share, begin, end, first, last);
    }
    for (auto& th : threads) th.join();
  };
  run_all(0, o.warmup_steps);
  const auto start = std::chrono::steady_clock::now();
  run_all(o.warmup_steps, o.warmup_steps + o.steps);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double env_rate = static_cast<double>(o.steps) * o.worlds / seconds;
  std::printf(
      "{\"task\": \"%s\", \"mode\": \"%s\", \"worlds\": %d, \"threads\": %d, \"steps\": %d, "
      "\"agents\": %d, \"max_episode_steps\": %d, \"seconds\": %.6f, \"env_steps_per_sec\": %.1f, "
      "\"agent_steps_per_sec\": %.1f}\n",
      info.name.c_str(), o.mode.c_str(), o.worlds, t_count, o.steps, agents, limit, seconds,
      env_rate, env_rate * agents);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  try {
    return Run(o);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "raw_step_limit: %s\n", error.what());
    return 2;
  }
}
