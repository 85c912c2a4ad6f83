"""Task pages generated from the native task registry, when the site is built.

Every registered task gets ``docs/tasks/<name>.md``: its docstring table (the
registration line's, turned from reStructuredText into Markdown), its keyword
arguments with their defaults and allowed values, its observation and action
spaces (read from a constructed env, so they cannot disagree with the code),
and the GIFs of it that ``docs/media/`` holds, or, where there is none, a frame
of it rendered beside the page (``docs/tasks/<name>.png``, 400x300, after
``reset(seed=0)``). ``docs/tasks/index.md`` lists
them. The pages are written before Sphinx reads its sources and are not
committed (``docs/tasks/.gitignore``), so a task registered, renamed or
re-documented in C++ shows on the next build with nothing to regenerate.

Run as a script, it writes the pages into a folder of your choice:
``.venv/bin/python docs/_ext/task_pages.py --out /tmp/task_pages``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1]
MEDIA = DOCS / "media"
TASK_DIR = "tasks"

# What a GIF in docs/media shows, where its file name alone does not say it.
GIF_CAPTIONS = {
    "cheetah_race.gif": "Four cheetahs on a shared track (layout='shared_track').",
    "sumo.gif": "A sumo bout: the self-play learner (orange) pushes a still Ant (blue) out of the ring.",
    "sumo_humanoids.gif": "robot='humanoid': two random Humanoids on the ring.",
    "run_to_goal_ants.gif": "Two random Ants.",
    "you_shall_not_pass.gif": "Random Humanoids: the walker (orange) and the blocker (blue).",
    "kick_and_defend.gif": "Random Humanoids: the kicker (orange) and the keeper (blue).",
}

# Every real-valued argument is checked to be finite with |x| <= this
# (kMaxRealParam in src/native/params.h); the ends of a range may also be -inf / inf.
MAX_REAL = 1e6


# --- reStructuredText of the registry's docstrings, as Markdown ------------------------------------

CODE_SPAN = re.compile(r"``(.+?)``|`([^`]+)`")


def inline(text: str, in_table: bool = False) -> str:
    """One line of the docstrings' reStructuredText as Markdown: ``literals``
    become code spans; what Markdown would read as markup outside them is escaped."""
    out, at = [], 0
    for match in CODE_SPAN.finditer(text):
        out.append(_escape(text[at:match.start()], in_table))
        code = match.group(1) or match.group(2)
        out.append(f"`{code.replace('|', chr(92) + '|') if in_table else code}`")
        at = match.end()
    out.append(_escape(text[at:], in_table))
    return "".join(out)


def _escape(prose: str, in_table: bool) -> str:
    prose = re.sub(r"([\\*_\[\]<>#~$])", r"\\\1", prose)
    return prose.replace("|", r"\|") if in_table else prose


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"=+( +=+)+ *", line))


def _table(lines: list[str]) -> list[str]:
    """A two-column simple table (label, then text continued on the lines below) as Markdown rows."""
    rule = lines[0]
    split = rule.index(" ")
    second = split + len(rule[split:]) - len(rule[split:].lstrip())
    rows: list[list[str]] = []
    for line in lines[1:-1]:
        label, text = line[:second].strip(), line[second:].strip()
        if label:
            rows.append([label, text])
        elif rows and text:
            rows[-1][1] += " " + text
    md = ["| | |", "|---|---|"]
    md += [f"| {inline(label, True)} | {inline(text, True)} |" for label, text in rows]
    return md


def rst_to_markdown(doc: str) -> str:
    """The registry's docstrings: paragraphs and two-column simple tables."""
    lines = doc.strip("\n").splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _is_rule(lines[i]):
            end = next(j for j in range(i + 1, len(lines)) if _is_rule(lines[j]))
            out += [""] + _table(lines[i:end + 1]) + [""]
            i = end + 1
            continue
        out.append(inline(lines[i].strip()) if lines[i].strip() else "")
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


# --- keyword arguments --------------------------------------------------------------------------

def choices(param: dict[str, Any]) -> list[str]:
    """The values a string argument takes, where its doc starts by naming them
    in quotes (``"'lanes' (side by side) or 'shared_track' ..."``)."""
    if param["kind"] != "str" or not param["doc"].startswith("'"):
        return []
    named = re.findall(r"'(\w+)'", param["doc"])
    return named if param["default"] in named else []


def _number(x: float) -> str:
    """A bound, short: 1e6, -inf, 0.4 (a float32 bound as it was written)."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.0e}" if abs(x) >= 1e5 and float(x).is_integer() else f"{x:.7g}"
    return text.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def allowed(param: dict[str, Any]) -> str:
    """What the native argument check accepts, in words."""
    kind = param["kind"]
    low, high = param.get("min"), param.get("max")
    if kind == "str":
        named = choices(param)
        return "one of " + ", ".join(f"`{c!r}`" for c in named) if named else "a string"
    if kind == "bool":
        return "`True` or `False`"
    if kind == "body":
        return "a body of the model, by name or index"
    if kind == "int":
        if low is not None and high is not None and (low > -(1 << 30) or high < (1 << 30)):
            return f"an int from {low} to {high}"
        return "an int"
    if low is None or high is None or (low, high) == (-MAX_REAL, MAX_REAL):
        bounds = f"\\|x\\| ≤ {_number(MAX_REAL)}"
    else:
        bounds = f"from {_number(low)} to {_number(high)}"
    if kind == "range":
        return f"`(low, high)`, each end finite, {bounds} (low may also be `-inf`, high `inf`)"
    if kind not in ("float", "optional_float"):
        return f"a {kind} (see its meaning)"
    suffix = ", or `None`" if kind == "optional_float" else ""
    return f"a finite float, {bounds}{suffix}"


def _default(value: Any) -> str:
    """The default as a Python literal (``inf`` for an unbounded end of a range)."""
    if isinstance(value, tuple):
        return "`(" + ", ".join(_number(v) if math.isinf(v) else repr(v) for v in value) + ")`"
    return f"`{value!r}`"


def params_table(params: list[dict[str, Any]]) -> list[str]:
    rows = ["| argument | default | allowed values | meaning |", "|---|---|---|---|"]
    for p in params:
        rows.append(f"| `{p['name']}` | {_default(p['default'])} | {allowed(p)} | {inline(p['doc'], True)} |")
    return rows


# --- spaces -------------------------------------------------------------------------------------

def _space(space) -> str:
    low, high = space.low, space.high
    if (low == low.flat[0]).all() and (high == high.flat[0]).all():
        bounds = f"[{_number(float(low.flat[0]))}, {_number(float(high.flat[0]))}]"
    else:
        bounds = "per-element bounds"
    return f"`Box` of shape `{tuple(space.shape)}`, `{space.dtype}`, {bounds}"


def spaces(spec) -> list[str]:
    """The spaces of a constructed env (each robot variant of a game that has a ``robot`` argument)."""
    import joltgym_marl

    if not spec.is_game:
        env = getattr(joltgym_marl.envs, spec.env_class)()
        try:
            return ["| | observation space | action space |", "|---|---|---|",
                    f"| `{spec.env_id}` | {_space(env.observation_space)} | {_space(env.action_space)} |"]
        finally:
            env.close()
    module = getattr(joltgym_marl, spec.module_name)
    robot = next((p for p in spec.params if p.name == "robot"), None)
    variants = [{}] if robot is None else [{"robot": r} for r in choices(vars(robot))]
    rows = ["| arguments | agents | observation space (each agent) | action space (each agent) |",
            "|---|---|---|---|"]
    for kwargs in variants:
        env = module.parallel_env(**kwargs)
        try:
            agent = env.possible_agents[0]
            args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) or "defaults"
            agents = ", ".join(f"`{a}`" for a in env.possible_agents)
            rows.append(f"| `{args}` | {agents} | {_space(env.observation_space(agent))} | "
                        f"{_space(env.action_space(agent))} |")
        finally:
            env.close()
    return rows


# --- pages --------------------------------------------------------------------------------------

def gifs(name: str) -> list[Path]:
    return sorted(p for p in MEDIA.glob("*.gif") if p.stem == name or p.stem.startswith(name + "_"))


def page_name(spec) -> str:
    return spec.name


def frame_name(spec) -> str:
    """The frame a page without a GIF shows, rendered beside the page when the site is built."""
    return f"{spec.name}.png"


FRAME_SIZE = (400, 300)


def render_frame(spec) -> bytes:
    """One frame of ``spec`` after ``reset(seed=0)``, as PNG bytes (MuJoCo's renderer, headless)."""
    import io

    from PIL import Image

    if spec.is_game:
        import joltgym_marl

        env = getattr(joltgym_marl, spec.module_name).parallel_env(render_mode="rgb_array", width=FRAME_SIZE[0],
                                                                   height=FRAME_SIZE[1])
    else:
        import gymnasium

        import joltgym_marl  # noqa: F401  (registers the ids)

        env = gymnasium.make(spec.env_id, render_mode="rgb_array", width=FRAME_SIZE[0], height=FRAME_SIZE[1])
    try:
        env.reset(seed=0)
        frame = env.render()
    finally:
        env.close()
    out = io.BytesIO()
    Image.fromarray(frame).save(out, format="PNG", optimize=True)
    return out.getvalue()


def heading(spec) -> str:
    return f"{spec.title} (`{spec.env_id}`)"


def how_to_make(spec) -> list[str]:
    if spec.is_game:
        return ["```python", f"from joltgym_marl import {spec.module_name}", "",
                f"env = {spec.module_name}.parallel_env()", "observations, infos = env.reset(seed=0)",
                "print(env.possible_agents, {a: o.shape for a, o in observations.items()})", "```", "",
                f"`{spec.module_name}.env()` is the AEC version, `{spec.module_name}.vec_env(num_worlds)` "
                "the natively batched one (every agent of every world a row); the keyword arguments "
                "below go to each of them."]
    return ["```python", "import gymnasium as gym", "import joltgym_marl  # registers the joltgym_marl/... ids",
            "", f'env = gym.make("{spec.env_id}")', "observation, info = env.reset(seed=0)",
            "print(observation.shape, env.action_space)", "```", "",
            f"The same task batched: `gym.make_vec(\"{spec.env_id}\", num_envs=64, "
            f"vectorization_mode=\"vector_entry_point\")`; one world without Gymnasium: "
            f"`joltgym_marl.{spec.core_class}()`; in a `WorldPool`: `WorldPool(\"{spec.name}\", num_envs)`. "
            "The keyword arguments below go to each of them."]


def task_page(spec) -> str:
    p = [f"# {heading(spec)}", ""]
    p.append("<!-- Generated from the native task registry by docs/_ext/task_pages.py; edit the task's "
             "registration in src/native/tasks/ instead. -->")
    p.append("")
    facts = ["| | |", "|---|---|", f"| native name | `{spec.name}` |"]
    if spec.is_game:
        facts += ["| kind | shared-world game (PettingZoo) |",
                  f"| module | `joltgym_marl.{spec.module_name}` (`parallel_env`, `env`, `raw_env`, `vec_env`) |",
                  f"| agents' name prefix | `{spec.agent_prefix}` |",
                  f"| episode length | `max_cycles`, default {spec.max_episode_steps} steps |"]
    else:
        facts += ["| kind | single-agent robot (Gymnasium) |", f"| Gymnasium id | `{spec.env_id}` |",
                  f"| reproduces | Gymnasium's `{spec.reference_id}` |" if spec.reference_id else "",
                  f"| classes | `{spec.core_class}`, `joltgym_marl.envs.{spec.env_class}`, "
                  f"`joltgym_marl.vector.{spec.vector_class}` |",
                  f"| episode length | truncated after {spec.max_episode_steps} steps |"]
    p += [row for row in facts if row] + [""]
    shown = gifs(spec.name)
    for gif in shown:
        caption = GIF_CAPTIONS.get(gif.name, f"{spec.title} ({gif.name}).")
        p += [f"![{caption}](../media/{gif.name})", "", f"*{inline(caption)}*", ""]
    if not shown:
        caption = f"{spec.title} after its reset (seed 0), rendered when the site was built"
        p += [f"![{caption}]({frame_name(spec)})", "", f"*{caption}; "
              "[`.venv/bin/python -m joltgym_marl record`](../guides/rendering.md) makes a video of it.*", ""]
    p += ["## Make it", ""] + how_to_make(spec) + [""]
    p += ["## The task", "", rst_to_markdown(spec.doc)]
    p += ["## Spaces", ""] + spaces(spec) + [""]
    p += ["## Keyword arguments", ""]
    params = _raw_params(spec.name)
    if params:
        p += params_table(params)
    else:
        p.append("None.")
    p += ["", "A value of the wrong kind or out of bounds, or an argument not listed here, raises a "
          "`ValueError` (or `TypeError`) that names it and what is allowed.", ""]
    return "\n".join(p)


def _raw_params(name: str) -> list[dict[str, Any]]:
    """The registry's own parameter records (with the bounds the core checks, where it exports them)."""
    from joltgym_marl._native import core

    return list(core.tasks()[name]["params"])


def index_page(specs) -> str:
    p = ["# Tasks", "",
         "<!-- Generated from the native task registry by docs/_ext/task_pages.py. -->", "",
         "Every task is described once, in its C++ file's registration line (the native task "
         "registry, `joltgym_marl.TASKS`); these pages are generated from it when the site is built.", ""]
    for title, game in (("Single-agent robots (Gymnasium)", False), ("Shared-world games (PettingZoo)", True)):
        p += [f"## {title}", "", "| task | id | summary |", "|---|---|---|"]
        for spec in specs:
            if spec.is_game == game:
                summary = inline(spec.doc.strip().splitlines()[0], True)
                p.append(f"| [{spec.title}]({page_name(spec)}.md) | `{spec.env_id}` | {summary} |")
        p.append("")
    p += ["```{toctree}", ":hidden:", ""] + [page_name(s) for s in specs] + ["```", ""]
    return "\n".join(p)


def pages() -> dict[str, str]:
    """Every generated page, by its path under docs/."""
    from joltgym_marl.registry import TASKS

    specs = sorted(TASKS.values(), key=lambda s: (s.is_game, s.title))
    out = {f"{TASK_DIR}/index.md": index_page(specs)}
    for spec in specs:
        out[f"{TASK_DIR}/{page_name(spec)}.md"] = task_page(spec)
    return out


def _write_if_changed(path: Path, data: bytes) -> None:
    if not path.exists() or path.read_bytes() != data:
        # Written beside it, then renamed: another build reading the
        # folder at the same time (two test workers) sees the old file
        # or the new one, never half of one.
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)


def write_pages(root: Path) -> list[Path]:
    """Writes the pages under ``root``, and the frame of each task that has no GIF
    (rewriting a file only when it changed, so Sphinx rebuilds only what did), and
    removes the files of tasks no longer registered."""
    from joltgym_marl.registry import TASKS

    folder = root / TASK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    fresh = {relative: text.encode() for relative, text in pages().items()}
    for spec in TASKS.values():
        if not gifs(spec.name):
            fresh[f"{TASK_DIR}/{frame_name(spec)}"] = render_frame(spec)
    written = []
    for relative, data in fresh.items():
        path = root / relative
        _write_if_changed(path, data)
        written.append(path)
    for stale in [*folder.glob("*.md"), *folder.glob("*.png")]:
        if f"{TASK_DIR}/{stale.name}" not in fresh:
            stale.unlink()
    return written


def _on_builder_inited(app) -> None:
    write_pages(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="folder to write tasks/*.md into (default: docs/)")
    for path in write_pages(parser.parse_args().out):
        print(path)
