"""Figures of the benchmark suite: statistics, targets, Markdown and charts.

Nothing here names a task: tasks come in as the suite's list of
``{"name", "label", "kind", "agents", "kwargs", ...}`` entries (from the
native registry), in the order they are reported.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

# The target table: ours against the limit, measured back to back, at this size.
TARGET_WORLDS, TARGET_THREADS = 64, 2
POOL_GOAL = 0.95  # single-agent: vector env / limit
GAME_GOAL = 0.9  # games: agent vector env / limit

# The other goals: (what, contender, reference(s), worlds, threads, goal); the
# reference of "best" entries is the better of several contenders in each round.
TARGETS = [
    ("vector / EnvPool best mode", "vector", ["envpool_sync", "envpool_async"], 64, 2, 1.4),
    ("vector / mujoco.batch", "vector", ["mj_batch"], 64, 2, 1.2),
    ("core / one-world limit", "core", ["limit"], 1, 1, 0.9),
]
GAME_TARGETS = [
    ("agent_vec / SuperSuit best", "agent_vec", ["supersuit_0", "supersuit_T"], 64, 2, 10.0),
]


def stats(samples: list | None) -> dict:
    values = [v for v in samples or [] if v is not None]
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def paired_ratios(samples: list | None, references: list[list | None]) -> list[float]:
    """Per round: the sample over the best reference measured in that round."""
    ratios = []
    for r, value in enumerate(samples or []):
        refs = [ref[r] for ref in references if ref is not None and ref[r] is not None]
        if value is not None and refs and max(refs) > 0:
            ratios.append(value / max(refs))
    return ratios


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def by_name(tasks: list[dict]) -> dict[str, dict]:
    return {t["name"]: t for t in tasks}


def unit(task: dict) -> str:
    return "agent-steps/s" if task["agents"] > 1 else "env-steps/s"


def entries(samples: dict, tasks: list[dict], contenders) -> list[dict]:
    info = by_name(tasks)
    rows = []
    for (task, contender, worlds, threads), values in samples.items():
        limit = samples.get((task, "limit", worlds, threads))
        ratios = paired_ratios(values, [limit]) if limit else []
        rows.append({
            "task": task, "task_label": info[task]["label"], "contender": contender,
            "label": contenders[contender][1], "family": contenders[contender][0],
            "worlds": worlds, "threads": threads, "unit": unit(info[task]),
            "samples": values, **stats(values),
            "ratio_to_limit": median_or_none(ratios), "ratio_samples": ratios,
        })
    return rows


def target_table(samples: dict, tasks: list[dict], worlds: int, threads: int) -> list[dict]:
    """Per task, ours (vector env; agent vector env for a game) and WorldPool.step_all
    against the limit measured back to back in the same rounds, at ``worlds`` / ``threads``."""
    rows = []
    for task in tasks:
        name, game = task["name"], task["kind"] == "game"
        ours = "agent_vec" if game else "vector"
        limit = samples.get((name, "limit", worlds, threads))
        mine = samples.get((name, ours, worlds, threads))
        if not limit or not mine:
            continue
        pool = samples.get((name, "pool", worlds, threads))
        ratios = paired_ratios(mine, [limit])
        pool_ratios = paired_ratios(pool, [limit]) if pool else []
        ratio = median_or_none(ratios)
        goal = GAME_GOAL if game else POOL_GOAL
        rows.append({
            "task": name, "task_label": task["label"], "kind": task["kind"], "unit": unit(task),
            "contender": ours, "worlds": worlds, "threads": threads,
            "at_requested_size": (worlds, threads) == (TARGET_WORLDS, TARGET_THREADS),
            "limit": stats(limit), "ours": stats(mine), "pool": stats(pool) if pool else None,
            "ratio": ratio, "ratio_samples": ratios,
            "pool_ratio": median_or_none(pool_ratios), "pool_ratio_samples": pool_ratios,
            "goal": goal, "met": None if ratio is None else bool(ratio >= goal),
        })
    return rows


def targets(samples: dict, tasks: list[dict]) -> list[dict]:
    """The other goals, at their size (or the nearest measured), where their references
    were measured."""
    out = []
    for task in tasks:
        name, label = task["name"], task["label"]
        for what, contender, refs, worlds, threads, goal in (GAME_TARGETS if task["kind"] == "game" else TARGETS):
            measured = sorted({w for (t, c, w, th) in samples if t == name and c == contender})
            if not measured:
                continue
            at = worlds if worlds in measured else max([w for w in measured if w <= worlds] or measured)
            thread_counts = sorted({th for (t, c, w, th) in samples if t == name and c == contender and w == at})
            th = threads if threads in thread_counts else thread_counts[-1]
            references = [samples.get((name, ref, at, th)) for ref in refs]
            if not any(references):
                continue
            values = samples.get((name, contender, at, th))
            ratio = median_or_none(paired_ratios(values, references))
            # What the limit itself reaches against the same reference: no implementation
            # of the env on this machine can do better than this.
            ceiling = None
            if refs != ["limit"]:
                ceiling = median_or_none(paired_ratios(samples.get((name, "limit", at, th)), references))
            out.append({"task": name, "task_label": label, "what": what, "contender": contender,
                        "references": refs, "worlds": at, "threads": th, "goal": goal,
                        "ratio": ratio, "ratio_samples": paired_ratios(values, references),
                        "limit_ratio": ceiling, "met": None if ratio is None else bool(ratio >= goal),
                        "at_requested_size": at == worlds and th == threads})
    return out


def assemble(*, grid, scaling, memory, tasks, contenders, machine, settings, worker_versions,
             peer_ids, unavailable, errors, skipped, started, duration) -> dict:
    games = [t for t in tasks if t["kind"] == "game"]
    notes = [
        "Rates are env-steps per second; for games, agent-steps per second (" + ", ".join(
            f"{t['label']}: {t['agents']} per world step" for t in games) + ")." if games else
        "Rates are env-steps per second.",
        "Ratios are medians over rounds of the ratio of two measurements taken back to back in "
        "the same round (interleaved), not ratios of the medians.",
        f"Gymnasium AsyncVectorEnv starts one process per world, so it runs only up to "
        f"{settings['async_cap']} worlds.",
        "gym_loop, gym_sync, gym_async, core and supersuit_0 do not use the threads setting; they "
        "are measured again at each thread count, next to that configuration's limit.",
        "mujoco.batch: one generic env for every task (Gymnasium's model, frame skip and reset noise; "
        "qpos[1:]/qvel observation, x-velocity minus control-cost reward, no task-specific terms and no "
        "mj_rnePostConstraint), so it does at most the work of a hand-written env of the task.",
        "EnvPool ships its own build of MuJoCo and its own task code; a task runs as EnvPool's "
        "<Title>-v5 where it has one, else <Title>-v4.",
        f"WorldPool.step_all (pool) is measured at the target size only "
        f"({settings['target_worlds']} worlds, {settings['target_threads']} threads).",
    ]
    for t in games:
        params = " ".join(f"--param {k}={v}" for k, v in t["kwargs"].items())
        notes.append(f"{t['label']}'s limit is raw_step_limit --task {t['name']}{' ' + params if params else ''}.")
    for m in memory:
        smallest = min((o for o in memory if o["task"] == m["task"]), key=lambda o: o["worlds"])
        if m["worlds"] > smallest["worlds"]:
            growth = m["rss_after"] - m["rss_before"]
            base = smallest["rss_after"] - smallest["rss_before"]
            m["marginal_bytes_per_world"] = (growth - base) / (m["worlds"] - smallest["worlds"])
        else:
            m["marginal_bytes_per_world"] = None
    target_rows = target_table(grid, tasks, settings["target_worlds"], settings["target_threads"])
    other_targets = targets(grid, tasks)
    if settings.get("quick"):
        # Quick sizes and budgets cannot meet the targets: figures, no verdicts.
        for row in target_rows + other_targets:
            row["met"] = None
    return {
        "meta": {"machine": machine, "settings": settings, "worker_versions": worker_versions,
                 "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
                 "duration_seconds": duration, "notes": notes, "skipped": skipped, "tasks": tasks,
                 "peer_ids": peer_ids},
        "throughput": entries(grid, tasks, contenders),
        "scaling": {"task": settings.get("scaling_task"), "throughput": entries(scaling, tasks, contenders),
                    "memory": memory},
        "target_table": target_rows,
        "targets": other_targets,
        "unavailable": unavailable,
        "errors": errors,
    }


# -- Markdown ---------------------------------------------------------------------------------


def rate(value: float | None) -> str:
    if value is None:
        return "failed"
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}"


def ratio_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def verdict(met: bool | None) -> str:
    return "not measured" if met is None else ("met" if met else "NOT MET")


QUICK_NOTE = ("Quick mode: figures only, without goals or verdicts. Its sizes and budgets (a few worlds, "
              "one short round) cannot meet the targets; run without --quick (or with --only targets) for "
              "the target table with its goals.")


def is_quick(results: dict) -> bool:
    return bool(results["meta"]["settings"].get("quick"))


def target_table_lines(results: dict) -> list[str]:
    """The target table as Markdown (also what the suite prints); a quick run's
    has the figures and ratios but no goal or verdict."""
    rows = results["target_table"]
    if not rows:
        return ["(no task had both the limit and ours measured at the target size)"]
    quick = is_quick(results)
    worlds, threads = rows[0]["worlds"], rows[0]["threads"]
    lines = [f"At {worlds} worlds and {threads} threads"
             + ("" if rows[0]["at_requested_size"] else
                f" (the target size, {TARGET_WORLDS} worlds and {TARGET_THREADS} threads, was not measured)")
             + ": ours (vector env; agent vector env for games) and WorldPool.step_all over the C++ limit "
               "(raw_step_limit --mode env), medians over rounds of ratios measured back to back.", ""]
    if quick:
        lines += [QUICK_NOTE, "",
                  "| task | limit | ours | ours / limit | WorldPool.step_all / limit |",
                  "|---|---:|---:|---:|---:|"]
    else:
        lines += ["| task | limit | ours | ours / limit | WorldPool.step_all / limit | goal | verdict |",
                  "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        line = (f"| {r['task_label']} | {rate(r['limit']['median'])} | {rate(r['ours']['median'])} | "
                f"{ratio_text(r['ratio'])} | {ratio_text(r['pool_ratio'])} |")
        lines.append(line if quick else line + f" >= {r['goal']:g} | {verdict(r['met'])} |")
    return lines


def target_lines(results: dict) -> list[str]:
    lines = []
    width = max((len(t["task_label"]) for t in results["targets"]), default=10) + 2
    for t in results["targets"]:
        where = f"{t['worlds']} world{'s' if t['worlds'] > 1 else ''}/{t['threads']}t"
        if not t["at_requested_size"]:
            where += " (requested size not measured)"
        measured = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        line = f"{t['task_label'] + ':':<{width}} {t['what']:<28} {where:<12} measured {measured:>7}"
        if not is_quick(results):
            line += f"  goal >= {t['goal']:<4g}  {verdict(t['met']):<8}"
        if t["limit_ratio"] is not None:
            line += f"  (the limit itself: {t['limit_ratio']:.2f}x)"
        lines.append(line.rstrip())
    return lines


def markdown(results: dict) -> str:
    meta = results["meta"]
    machine, settings = meta["machine"], meta["settings"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    mode = " (quick mode)" if settings["quick"] else " (--only targets)" if settings.get("only") else ""
    out = [
        "# joltgym_marl benchmarks",
        "",
        f"- machine: {machine['cpu']}, {machine['logical_cores']} logical cores "
        f"({machine['usable_cores']} usable), Python {machine['python']}",
        f"- versions: {versions}",
        f"- run: {meta['started']}, {meta['duration_seconds'] / 60:.1f} min; "
        f"{settings['rounds']} interleaved round(s), {settings['budget_seconds']} s per measurement "
        f"after a {settings['warmup_seconds']} s warm-up{mode}",
        f"- tasks (the native registry): {', '.join(t['label'] for t in meta['tasks'])}",
    ]
    if settings.get("peer_tasks") is not None and set(settings["peer_tasks"]) != set(settings["tasks"]):
        labels = {t["name"]: t["label"] for t in meta["tasks"]}
        out.append(f"- peers measured on: {', '.join(labels[t] for t in settings['peer_tasks']) or 'none'} "
                   "(the other tasks: the limit and ours only)")
    if meta["skipped"]:
        out.append(f"- skipped: {meta['skipped']}")
    out += ["", "## Targets", "", *target_table_lines(results), ""]
    if results["targets"]:
        out += [("Other comparisons" if is_quick(results) else "Other goals")
                + " (single core: 1 world, 1 thread); \"best\" takes the faster reference mode in "
                "each round. In brackets, the same ratio for the C++ limit: no implementation can exceed "
                "it here.", "", "```", *target_lines(results), "```", ""]

    out += ["## Throughput", "",
            "Median steps/s over rounds, and in parentheses the ratio to the limit at the same "
            "task, worlds and threads. " + " ".join(meta["notes"][:4]), ""]
    rows = results["throughput"]
    unavailable = results.get("unavailable", [])
    worlds = sorted({r["worlds"] for r in rows})
    for task in meta["tasks"]:
        task_rows = [r for r in rows if r["task"] == task["name"]]
        missing = [u for u in unavailable if u["task"] == task["name"]]
        if not task_rows:
            continue
        out += [f"### {task['label']} ({unit(task)})", "",
                "| contender | threads | " + " | ".join(f"{w} world{'s' if w > 1 else ''}" for w in worlds) + " |",
                "|---|---|" + "---:|" * len(worlds)]
        order = list(dict.fromkeys(r["contender"] for r in task_rows))
        for contender in sorted(order, key=lambda c: _CONTENDER_ORDER.index(c) if c in _CONTENDER_ORDER else 99):
            for threads in sorted({r["threads"] for r in task_rows}):
                cells = []
                label = None
                for w in worlds:
                    match = [r for r in task_rows if r["contender"] == contender and r["worlds"] == w
                             and r["threads"] == threads]
                    if not match:
                        cells.append("")
                        continue
                    r = match[0]
                    label = r["label"]
                    cell = rate(r["median"])
                    if contender != "limit" and r["ratio_to_limit"] is not None:
                        cell += f" ({r['ratio_to_limit']:.2f})"
                    cells.append(cell)
                if label is not None:
                    out.append(f"| {label} | {threads} | " + " | ".join(cells) + " |")
        for u in missing:
            out.append(f"| {u['label']} | | " + " | ".join("n/a" for _ in worlds) + " |")
        out.append("")
        if missing:
            reasons = {}
            for u in missing:
                reasons.setdefault(u["reason"], []).append(u["label"])
            out += ["Not available: " + "; ".join(f"{', '.join(labels)} ({reason})"
                                                  for reason, labels in reasons.items()) + ".", ""]

    scaling = results["scaling"]
    if scaling["throughput"]:
        label = next((t["label"] for t in meta["tasks"] if t["name"] == scaling.get("task")), scaling.get("task"))
        ours = next((r["contender"] for r in scaling["throughput"] if r["contender"] != "limit"), "vector")
        ours_label = next((r["label"] for r in scaling["throughput"] if r["contender"] == ours), ours)
        out += [f"## Scaling: {label}, 2 threads", "",
                f"| worlds | limit | {ours_label} | ratio |", "|---:|---:|---:|---:|"]
        by = {(r["contender"], r["worlds"]): r for r in scaling["throughput"]}
        for w in sorted({r["worlds"] for r in scaling["throughput"]}):
            limit, mine = by.get(("limit", w)), by.get((ours, w))
            ratio = mine and mine["ratio_to_limit"]
            out.append(f"| {w} | {rate(limit and limit['median'])} | {rate(mine and mine['median'])} | "
                       f"{'' if ratio is None else f'{ratio:.2f}'} |")
        out.append("")
    if scaling["memory"]:
        out += ["## Memory and construction (our vector env, 2 threads, a fresh process per size)", "",
                "RSS growth: resident set after building N worlds, resetting and stepping them once, "
                "minus before building. Marginal: the growth beyond the smallest size's, per added world.",
                "",
                "| task | worlds | RSS growth | growth / world | marginal / world | construction | reset + 1 step |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        labels = {t["name"]: t["label"] for t in meta["tasks"]}
        for m in scaling["memory"]:
            growth = (m["rss_after"] - m["rss_before"]) / 2**20
            marginal = m.get("marginal_bytes_per_world")
            out.append(f"| {labels.get(m['task'], m['task'])} | {m['worlds']} | {growth:,.1f} MiB | "
                       f"{m['bytes_per_world'] / 1024:,.1f} KiB | "
                       f"{'' if marginal is None else f'{marginal / 1024:,.1f} KiB'} | "
                       f"{m['construct_seconds'] * 1000:,.1f} ms | {m['reset_and_step_seconds'] * 1000:,.1f} ms |")
        out.append("")
    out += ["## Notes", "", *[f"- {n}" for n in meta["notes"]], ""]
    if results["errors"]:
        out += ["## Errors", ""]
        for e in results["errors"]:
            first = (e.get("error") or "").splitlines()[0] if e.get("error") else ""
            out.append(f"- {e.get('task')} {e.get('worlds')} worlds {e.get('threads')}t "
                       f"{e.get('contender')}: {first}")
        out.append("")
    return "\n".join(out)


_CONTENDER_ORDER = ["limit", "core", "vector", "pool", "agent_vec", "gym_loop", "gym_sync", "gym_async",
                    "mj_batch", "envpool_sync", "envpool_async", "supersuit_0", "supersuit_T"]


# -- charts -------------------------------------------------------------------------------------


def charts(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["throughput"]
    threads = 2 if any(r["threads"] == 2 for r in rows) else max((r["threads"] for r in rows), default=1)
    labels = [t["label"] for t in results["meta"]["tasks"] if any(r["task"] == t["name"] for r in rows)]
    columns = 2 if len(labels) <= 4 else 3
    lines = max(1, math.ceil(len(labels) / columns))
    fig, axes = plt.subplots(lines, columns, figsize=(6 * columns, 4.5 * lines), squeeze=False)
    for ax, task in zip(axes.flat, labels):
        task_rows = [r for r in rows if r["task_label"] == task and r["threads"] == threads]
        for contender in _CONTENDER_ORDER:
            points = sorted((r["worlds"], r["median"]) for r in task_rows
                            if r["contender"] == contender and r["median"])
            if not points:
                continue
            label = next(r["label"] for r in task_rows if r["contender"] == contender)
            style = {"color": "black", "linestyle": "--", "linewidth": 2} if contender == "limit" else {}
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{task}, {threads} threads")
        ax.set_xlabel("worlds")
        ax.set_ylabel(task_rows[0]["unit"] if task_rows else "steps/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(labels):]:
        ax.axis("off")
    fig.suptitle("Throughput vs number of worlds (median over rounds)")
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)

    scaling = results["scaling"]
    scaling_label = next((t["label"] for t in results["meta"]["tasks"] if t["name"] == scaling.get("task")),
                         scaling.get("task") or "")
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(16, 4.5))
    for contender in dict.fromkeys(r["contender"] for r in scaling["throughput"]):
        style = {"color": "black", "linestyle": "--"} if contender == "limit" else {}
        points = sorted((r["worlds"], r["median"]) for r in scaling["throughput"]
                        if r["contender"] == contender and r["median"])
        if points:
            label = next(r["label"] for r in scaling["throughput"] if r["contender"] == contender)
            left.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, **style)
    left.set_title(f"{scaling_label} throughput, 2 threads")
    left.set_ylabel(scaling["throughput"][0]["unit"] if scaling["throughput"] else "steps/s")
    labels_by_name = {t["name"]: t["label"] for t in results["meta"]["tasks"]}
    for task in dict.fromkeys(m["task"] for m in scaling["memory"]):
        mine = sorted((m for m in scaling["memory"] if m["task"] == task), key=lambda m: m["worlds"])
        worlds = [m["worlds"] for m in mine]
        name = labels_by_name.get(task, task)
        middle.plot(worlds, [max(m["rss_after"] - m["rss_before"], 1) / 2**20 for m in mine], marker="o", label=name)
        right.plot(worlds, [m["construct_seconds"] * 1000 for m in mine], marker="o", label=name)
    middle.set_title("Resident set growth (our vector env)")
    middle.set_ylabel("MiB")
    right.set_title("Construction time (our vector env)")
    right.set_ylabel("ms")
    for ax in (left, middle, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("worlds")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "scaling.png", dpi=110)
    plt.close(fig)
