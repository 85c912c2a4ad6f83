"""``python -m joltgym_marl``: what the library holds, and a first look at it.

    python -m joltgym_marl list                 every task, its kind and its ids
    python -m joltgym_marl info sumo            one task: ids, docstring table, keyword arguments
    python -m joltgym_marl list --kind mamujoco the MaMuJoCo scenarios, their confs and per-agent dims
    python -m joltgym_marl demo                 a four-cheetah race, then 64 races at once
    python -m joltgym_marl bench half-cheetah   a quick side-by-side throughput figure
    python -m joltgym_marl record sumo --out sumo.gif    a short video of a task

A TASK is any name of a task: its native name (half_cheetah), title
(HalfCheetah), Gymnasium or PettingZoo id (joltgym_marl/HalfCheetah-v0,
sumo_v0) or class name (HalfCheetahCore), in any case, with or without
'_', '-' or ' ' between the words. Everything listed comes from the native
task registry.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from typing import Any

from joltgym_marl.demo import MAX_WORLDS  # the largest batch a WorldPool takes

PROG = "python -m joltgym_marl"

# Exit statuses: 2 for a command line that cannot be run as given (argparse's own, and a value
# the task refuses), 1 for a run that failed (a video that could not be written).
USAGE_ERROR = 2



def _int_in(low: int, high: int | None = None):
    """An argparse type: an int in [low, high]."""
    expected = f"an int >= {low}" if high is None else f"an int in [{low}, {high}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"should be {expected}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"should be {expected}, got {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds in (0, 3600]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"should be a number of seconds in (0, 3600], got {text!r}") from None
    if not 0 < value <= 3600:  # NaN fails too
        raise argparse.ArgumentTypeError(f"should be a number of seconds in (0, 3600], got {text!r}")
    return value


def _text(text: str) -> str:
    """An argparse type: text that can reach the core (UTF-8; a byte that is not arrives from the
    shell as a lone surrogate, which pybind11 cannot convert)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise argparse.ArgumentTypeError(f"should be UTF-8 text, got {shown!r}") from None
    return text


def _usage_error(command: str, message: str) -> SystemExit:
    """One line on stderr and exit status 2: the command line cannot be run as given."""
    print(f"{PROG} {command}: {message}", file=sys.stderr)
    return SystemExit(USAGE_ERROR)


def _task_kwargs(pairs: list[str], parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``NAME=VALUE`` pairs as keyword arguments; a VALUE that reads as a Python
    literal (3.5, True, None, (0.1, 0.2)) is that literal, else a str."""
    kwargs = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.isidentifier():
            parser.error(f"--param should be NAME=VALUE (e.g. ring_radius=3.5), got {pair!r}")
        if name in kwargs:
            parser.error(f"--param {name} is given twice: {name}={kwargs[name]!r} and {pair!r}")
        try:
            kwargs[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            kwargs[name] = text
    return kwargs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    from joltgym_marl import __version__, _core

    parser.add_argument("--version", action="version",
                        version=f"joltgym_marl {__version__} (MuJoCo {_core.mujoco_version()})")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="every task with its kind and ids",
                                  description="Every registered task with its kind and ids, from the native "
                                              "registry.")
    listing.add_argument("--kind", choices=["single_agent", "game", "mamujoco"],
                         help="only tasks of this kind (mamujoco: the MaMuJoCo scenarios)")
    listing.add_argument("--json", action="store_true", help="one JSON list of records (joltgym_marl.tasks())")

    info = commands.add_parser("info", help="one task: ids, docstring table, keyword arguments",
                               description="One task: its kind and ids, its docstring table (actions, "
                                           "observations, rewards, infos) and its keyword arguments with "
                                           "defaults and allowed values.")
    info.add_argument("task", metavar="TASK", type=_text, help="any name of a task (python -m joltgym_marl list)")
    info.add_argument("--json", action="store_true", help="the record as JSON")

    from joltgym_marl import demo

    demo_parser = commands.add_parser("demo", help="a four-cheetah race, then 64 races at once",
                                      description=demo.__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.build_parser(parser=demo_parser)

    bench = commands.add_parser("bench", help="a quick side-by-side throughput figure of a task",
                                description="A quick side-by-side throughput figure of one task: a "
                                            "single-agent task as its Gymnasium env and its native vector "
                                            "env, against Gymnasium's own env of the task it reproduces; a "
                                            "game as one world through parallel_env against many worlds "
                                            "through vec_env. Random actions, step() calls only.")
    bench.add_argument("task", metavar="TASK", nargs="?", default=None, type=_text,
                       help="any name of a task (default: the registry's first single-agent task)")
    bench.add_argument("--worlds", type=_int_in(1, MAX_WORLDS), default=64,
                       help="worlds of the batched figure (default 64)")
    bench.add_argument("--threads", type=_int_in(1, 1024), default=None,
                       help="native threads (default: the machine's cores)")
    bench.add_argument("--seconds", type=_seconds, default=1.0,
                       help="seconds each figure is measured, at most 3600 (default 1)")
    bench.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", type=_text,
                       help="a keyword argument of the task (repeatable), e.g. num_agents=4")

    record = commands.add_parser("record", help="write a short GIF or MP4 of a task",
                                 description="Plays one episode of a task with random actions, headless, and "
                                             "writes it to a .gif or .mp4 (needs imageio; .mp4 also "
                                             "imageio-ffmpeg). Says so when the episode ends early.")
    record.add_argument("task", metavar="TASK", type=_text, help="any name of a task (python -m joltgym_marl list)")
    record.add_argument("--out", default=None, help="output .gif or .mp4 (default: <task>.gif)")
    record.add_argument("--steps", type=_int_in(1, 1_000_000), default=200,
                        help="steps to play at most (default 200)")
    record.add_argument("--every", type=_int_in(1), default=2, help="keep one frame in this many steps (default 2)")
    record.add_argument("--width", type=_int_in(1, 8192), default=480, help="frame width in pixels (default 480)")
    record.add_argument("--height", type=_int_in(1, 8192), default=320,
                        help="frame height in pixels (default 320)")
    record.add_argument("--seed", type=_int_in(0), default=0,
                        help="seed of the reset and the random actions, >= 0 (default 0)")
    record.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", type=_text,
                        help="a keyword argument of the task (repeatable), e.g. robot=humanoid")
    return parser


def _resolve(name: str):
    from joltgym_marl.registry import resolve

    try:
        return resolve(name)
    except ValueError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR) from None


def _task_errors() -> tuple[type[BaseException], ...]:
    """What a task's constructor raises for keyword arguments it refuses: an unknown name or a
    bad value (TypeError, ValueError), a model file that is missing (FileNotFoundError) or that
    MuJoCo cannot compile (MujocoError), and Gymnasium's own checks (gymnasium.error.Error)."""
    import gymnasium

    from joltgym_marl import _core

    return (TypeError, ValueError, FileNotFoundError, _core.MujocoError, gymnasium.error.Error)


def _shown(text: str) -> str:
    """``text`` as it can be printed: a path's undecodable bytes as escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _record_dict(record) -> dict[str, Any]:
    out = {k: v for k, v in vars(record).items() if k not in ("params", "names")}
    out["engines"] = list(record.engines)
    out["names"] = list(record.names)
    out["params"] = [{"name": p.name, "kind": p.kind, "default": p.default, "doc": p.doc, "allowed": p.allowed}
                     for p in record.params]
    return out


def _scenario_dict(record) -> dict[str, Any]:
    return {"scenario": record.scenario, "kind": record.kind, "module": record.module, "robot": record.robot,
            "any_nxk": record.any_nxk, "confs": [vars(c) | {"action_dims": list(c.action_dims),
                                                          "obs_dims": list(c.obs_dims)} for c in record.confs]}


def _conf_text(conf) -> str:
    from joltgym_marl.mamujoco.catalog import dims_text

    star = "" if conf.in_farama else "*"
    return f"{conf.agent_conf}{star} ({conf.agents}: obs {dims_text(conf.obs_dims)})"


def _print_scenarios(records) -> None:
    print(f"{len(records)} MaMuJoCo scenarios: from joltgym_marl import mamujoco_v1; "
          "mamujoco_v1.parallel_env(scenario, agent_conf), .env(), .vec_env(..., num_envs)")
    width = max(len(r.scenario) for r in records) + 2
    robot_width = max(len(r.robot) for r in records) + 2
    print(f"  {'scenario':<{width}}{'robot':<{robot_width}}agent_conf (agents: obs dims, agent_obsk=1); "
          "* = not in Farama's table; each also takes None (1 agent observing state()), but the NxK ones")
    for r in records:
        confs = [c for c in r.confs if c.agent_conf is not None]
        text = ", ".join(_conf_text(c) for c in confs) if confs else "None only"
        if r.any_nxk:
            text = "any NxK, e.g. " + text
        print(f"  {r.scenario:<{width}}{r.robot:<{robot_width}}{text}")


def _engines_text(engines) -> str:
    """The engines a task runs on, as this build has them: a build without Jolt Physics (its
    source could not be fetched) says so rather than listing an engine that would raise."""
    from joltgym_marl import _core

    missing = [e for e in engines if e == "jolt" and not _core.jolt_available()]
    text = ", ".join(e for e in engines if e not in missing)
    if missing:
        text += (f" (and {', '.join(missing)} in a build with Jolt Physics, which this one is not: "
                 "docs/guides/jolt.md, Building with Jolt)")
    return text


def cmd_list(args: argparse.Namespace) -> None:
    from joltgym_marl.registry import tasks

    if args.kind == "mamujoco":
        scenarios = tasks("mamujoco")
        if args.json:
            print(json.dumps([_scenario_dict(r) for r in scenarios], indent=1))
        else:
            _print_scenarios(scenarios)
        return
    records = tasks(args.kind)
    if args.json:
        print(json.dumps([_record_dict(r) for r in records], indent=1, default=repr))
        return
    singles = [r for r in records if r.kind == "single_agent"]
    games = [r for r in records if r.kind == "game"]
    if singles:
        print(f"{len(singles)} single-agent tasks: gymnasium.make(<gymnasium id>), or one native world "
              "as joltgym_marl.<core class>")
        width = max(len(r.name) for r in singles) + 2
        id_width = max(len(r.gymnasium_id) for r in singles) + 2
        print(f"  {'name':<{width}}{'gymnasium id':<{id_width}}{'reproduces':<28}core class")
        for r in singles:
            print(f"  {r.name:<{width}}{r.gymnasium_id:<{id_width}}{r.reference_id or '':<28}{r.core_class}")
    if games:
        if singles:
            print()
        print(f"{len(games)} shared-world games: from joltgym_marl import <module>; <module>.parallel_env(), "
              ".env(), .vec_env(num_worlds)")
        width = max(len(r.name) for r in games) + 2
        module_width = max(len(r.pettingzoo_module) for r in games) + 2
        print(f"  {'name':<{width}}{'module':<{module_width}}{'max cycles':<12}class")
        for r in games:
            print(f"  {r.name:<{width}}{r.pettingzoo_module:<{module_width}}{r.max_episode_steps:<12}"
                  f"{r.env_class}")
    if args.kind is None:
        print()
        _print_scenarios(tasks("mamujoco"))
    engines = sorted({e for r in records for e in r.engines}, key=lambda e: (e != "mujoco", e))  # the reference first
    print(f"\nEngines: {_engines_text(engines)}. Any name of a task works in `info`, `bench`, `record` and "
          "WorldPool(name): python -m joltgym_marl info TASK")


def _print_scenario(record) -> None:
    from joltgym_marl.mamujoco.catalog import dims_text

    print(f"MaMuJoCo {record.scenario}: mamujoco_v1.parallel_env({record.scenario!r}, agent_conf), "
          f"a factorization of the robot {record.robot!r}")
    if record.any_nxk:
        print("  agent_conf: any 'NxK' (N agents of K segments each; the MJCF is generated), e.g.:")
    rows = [("agent_conf", "agents", "action dims", "obs dims (agent_obsk=1)", "state")]
    for c in record.confs:
        rows.append((f"{c.agent_conf}{'' if c.in_farama else ' *'}", str(c.agents), dims_text(c.action_dims),
                     dims_text(c.obs_dims), str(c.state_dim)))
    widths = [max(len(row[k]) for row in rows) + 2 for k in range(len(rows[0]))]
    for row in rows:
        print("  " + "".join(f"{cell:<{w}}" for cell, w in zip(row, widths)).rstrip())
    if not all(c.in_farama for c in record.confs):
        print("  * a conf of the original MaMuJoCo code that Farama's table dropped (HARL's tuned configs use it)")


def cmd_info(args: argparse.Namespace) -> None:
    from joltgym_marl.mamujoco import catalog
    from joltgym_marl.registry import resolve, task

    try:
        resolve(args.task)
    except (TypeError, ValueError):
        found = catalog.find(args.task)  # a MaMuJoCo scenario that is no task's name
        if found is not None:
            if args.json:
                print(json.dumps(_scenario_dict(found), indent=1))
            else:
                _print_scenario(found)
            return
    spec = _resolve(args.task)
    record = task(spec.name)
    scenarios = [s for s in catalog.scenarios() if s.robot == record.name]
    if args.json:
        print(json.dumps(_record_dict(record) | {"doc": spec.doc, "mamujoco": [_scenario_dict(s) for s in scenarios]},
                         indent=1, default=repr))
        return
    kind = "single-agent task" if record.kind == "single_agent" else "shared-world game"
    print(f"{record.name}: a {kind}, on {_engines_text(record.engines)}")
    rows = [("title", record.title)]
    if record.kind == "single_agent":
        rows += [("gymnasium id", f"gymnasium.make({record.gymnasium_id!r}), max_episode_steps "
                                  f"{record.max_episode_steps}"),
                 ("reproduces", f"Gymnasium's {record.reference_id}, step for step"),
                 ("one world", f"joltgym_marl.{record.core_class}()"),
                 ("env class", f"joltgym_marl.envs.{record.env_class}"),
                 ("vector env", f"gymnasium.make_vec({record.gymnasium_id!r}, num_envs, "
                                f"vectorization_mode='vector_entry_point') -> "
                                f"joltgym_marl.vector.{record.vector_class}")]
    else:
        module = record.pettingzoo_module
        rows += [("PettingZoo", f"from joltgym_marl import {module}; {module}.parallel_env() / .env() / "
                                f".raw_env(), max_cycles {record.max_episode_steps}"),
                 ("batched", f"{module}.vec_env(num_worlds): every agent of every world a row"),
                 ("env class", f"joltgym_marl.envs.{module}.{record.env_class}")]
    rows += [("native", f"WorldPool({record.name!r}, num_envs)"),
             ("also named", ", ".join(n for n in record.names if n != record.name))]
    width = max(len(k) for k, _ in rows) + 2
    for key, value in rows:
        print(f"  {key + ':':<{width}}{value}")
    print()
    print(spec.doc.strip())
    print()
    print("Keyword arguments (defaults shown):")
    for p in spec.params:
        print(f"  {p.describe()}")
    for scenario in scenarios:
        print()
        _print_scenario(scenario)


def cmd_bench(args: argparse.Namespace) -> None:
    from joltgym_marl import quickbench
    from joltgym_marl.registry import SINGLE_AGENT_TASKS, TASKS

    spec = _resolve(args.task) if args.task else (SINGLE_AGENT_TASKS or list(TASKS.values()))[0]
    kwargs = _task_kwargs(args.param, build_parser())
    # Everything the task refuses is refused before anything is measured: one world of the batch
    # (the batch itself, --worlds of them, is built by the measurement).
    try:
        quickbench.check(spec.name, threads=args.threads, **kwargs)
    except _task_errors() as error:
        raise _usage_error("bench", str(error)) from None
    print(f"measuring {spec.name} ({spec.env_id}) for about {args.seconds:g} s per figure ...", flush=True)
    try:
        rows = quickbench.figures(spec.name, worlds=args.worlds, threads=args.threads, seconds=args.seconds,
                                  **kwargs)
    except MemoryError:
        raise SystemExit(f"{PROG} bench: not enough memory for --worlds {args.worlds} of {spec.name}") from None
    print(quickbench.table(spec, rows))


# The frames of a recording are kept in memory until they are written.
MAX_RECORDING_BYTES = 4 << 30


def cmd_record(args: argparse.Namespace) -> None:
    from joltgym_marl import recording

    spec = _resolve(args.task)
    out = args.out or f"{spec.name}.gif"
    try:
        recording.check_path(out)
    except ValueError as error:
        raise _usage_error("record", str(error)) from None
    frames = args.steps // args.every + 2
    if frames * args.width * args.height * 3 > MAX_RECORDING_BYTES:
        raise _usage_error("record", f"{frames} frames of {args.width}x{args.height} would need "
                                     f"{frames * args.width * args.height * 3 / 2**30:.1f} GiB of memory, more "
                                     f"than {MAX_RECORDING_BYTES >> 30} GiB: fewer --steps, a larger --every or "
                                     "smaller frames")
    # Said before the recording, not after it (nothing is created yet: recording.save makes the
    # folders): the nearest existing folder on the way should be one we may write in.
    folder = os.path.dirname(os.path.abspath(out))
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise SystemExit(f"{PROG} record: --out {_shown(repr(out))} cannot be written: {_shown(repr(folder))} is "
                         f"{'not a folder' if not os.path.isdir(folder) else 'not writable'}")
    if os.path.isdir(out) or (os.path.exists(out) and not os.access(out, os.W_OK)):
        raise SystemExit(f"{PROG} record: --out {_shown(repr(out))} cannot be written: it is "
                         f"{'a folder' if os.path.isdir(out) else 'a file that is not writable'}")
    kwargs = _task_kwargs(args.param, build_parser())
    options = dict(steps=args.steps, every=args.every, width=args.width, height=args.height, seed=args.seed)
    # Everything the task refuses (its keyword arguments, the frame rate they give) is refused
    # before the episode is played, so that no recording is lost to a bad argument.
    try:
        recording.check(spec.name, **options, **kwargs)
    except _task_errors() as error:
        raise _usage_error("record", str(error)) from None
    try:
        result = recording.record(spec.name, **options, **kwargs)
    except (OSError, MemoryError) as error:  # the renderer (no GL), the memory the frames need
        raise SystemExit(f"{PROG} record: recording {spec.name} failed: {_shown(str(error) or type(error).__name__)}") \
            from None
    try:
        path = recording.save(result, out)
    except OSError as error:
        reason = error.strerror or str(error)
        raise SystemExit(f"{PROG} record: --out {_shown(repr(out))} cannot be written: {_shown(reason)}; "
                         f"the {len(result.frames)} frames recorded are lost") from None
    print(_shown(result.summary(path)))


COMMANDS = {"list": cmd_list, "info": cmd_info, "bench": cmd_bench, "record": cmd_record}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            from joltgym_marl import demo

            demo.run(args)
        else:
            COMMANDS[args.command](args)
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0
