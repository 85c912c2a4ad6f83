"""Figures of the benchmark suite: statistics, targets, Markdown and charts."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

# (what, contender, reference(s), worlds, threads, goal); the reference of
# "best" entries is the better of several contenders in each round.
TARGETS = [
    ("vector / limit", "vector", ["limit"], 64, 2, 0.95),
    ("vector / EnvPool best mode", "vector", ["envpool_sync", "envpool_async"], 64, 2, 1.4),
    ("vector / mujoco.batch", "vector", ["mj_batch"], 64, 2, 1.2),
    ("core / one-world limit", "core", ["limit"], 1, 1, 0.9),
]
RACE_TARGETS = [
    ("agent_vec / limit", "agent_vec", ["limit"], 64, 2, 0.9),
    ("agent_vec / SuperSuit best", "agent_vec", ["supersuit_0", "supersuit_T"], 64, 2, 10.0),
]


def stats(samples: list) -> dict:
    values = [v for v in samples if v is not None]
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def paired_ratios(samples: list, references: list[list]) -> list[float]:
    """Per round: the sample over the best reference measured in that round."""
    ratios = []
    for r, value in enumerate(samples):
        refs = [ref[r] for ref in references if ref is not None and ref[r] is not None]
        if value is not None and refs and max(refs) > 0:
            ratios.append(value / max(refs))
    return ratios


def entries(samples: dict, tasks, contenders) -> list[dict]:
    labels = {task: label for task, label, _ in tasks}
    agents = {task: n for task, _, n in tasks}
    rows = []
    for (task, contender, worlds, threads), values in samples.items():
        limit = samples.get((task, "limit", worlds, threads))
        ratios = paired_ratios(values, [limit]) if limit else []
        rows.append({
            "task": task, "task_label": labels[task], "contender": contender,
            "label": contenders[contender][1], "family": contenders[contender][0],
            "worlds": worlds, "threads": threads,
            "unit": "agent-steps/s" if agents[task] > 1 else "env-steps/s",
            "samples": values, **stats(values),
            "ratio_to_limit": statistics.median(ratios) if ratios else None,
            "ratio_samples": ratios,
        })
    return rows


def targets(samples: dict, tasks) -> list[dict]:
    """The suite's goals, at 64 worlds / 2 threads (or the nearest measured size)."""
    out = []
    for task, label, agents in tasks:
        for what, contender, refs, worlds, threads, goal in (TARGETS if agents == 1 else RACE_TARGETS):
            measured = sorted({w for (t, c, w, th) in samples if t == task and c == contender})
            if not measured:
                continue
            at = worlds if worlds in measured else max([w for w in measured if w <= worlds] or measured)
            thread_counts = sorted({th for (t, c, w, th) in samples if t == task and c == contender and w == at})
            th = threads if threads in thread_counts else thread_counts[-1]
            values = samples.get((task, contender, at, th))
            ratios = paired_ratios(values, [samples.get((task, ref, at, th)) for ref in refs])
            ratio = statistics.median(ratios) if ratios else None
            # What the limit itself reaches against the same reference: no implementation
            # of the env on this machine can do better than this.
            ceiling = None
            if refs != ["limit"]:
                limit_ratios = paired_ratios(samples.get((task, "limit", at, th)) or [],
                                             [samples.get((task, ref, at, th)) for ref in refs])
                ceiling = statistics.median(limit_ratios) if limit_ratios else None
            out.append({"task": task, "task_label": label, "what": what, "contender": contender,
                        "references": refs, "worlds": at, "threads": th, "goal": goal,
                        "ratio": ratio, "ratio_samples": ratios, "limit_ratio": ceiling,
                        "met": None if ratio is None else bool(ratio >= goal),
                        "at_requested_size": at == worlds and th == threads})
    return out


def assemble(*, grid, scaling, memory, tasks, contenders, machine, settings, worker_versions,
             errors, skipped, started, duration) -> dict:
    notes = [
        "Rates are env-steps per second; for CheetahRace, agent-steps per second (4 per world step).",
        "Ratios are medians over rounds of the ratio of two measurements taken back to back in "
        "the same round (interleaved), not ratios of the medians.",
        f"Gymnasium AsyncVectorEnv starts one process per world, so it runs only up to "
        f"{settings['async_cap']} worlds.",
        "gym_loop, gym_sync, gym_async, core and supersuit_0 do not use the threads setting; they "
        "are measured again at each thread count, next to that configuration's limit.",
        "mujoco.batch: observations and rewards in NumPy from bound fields; cfrc_ext is read "
        "without mj_rnePostConstraint (there is no batched one), which skips that work.",
        "EnvPool ships its own build of MuJoCo and its own *-v5 task code.",
        "CheetahRace's limit is raw_step_limit --task cheetah_race --param num_agents=4.",
    ]
    for m in memory:
        smallest = min((o for o in memory if o["task"] == m["task"]), key=lambda o: o["worlds"])
        if m["worlds"] > smallest["worlds"]:
            growth = m["rss_after"] - m["rss_before"]
            base = smallest["rss_after"] - smallest["rss_before"]
            m["marginal_bytes_per_world"] = (growth - base) / (m["worlds"] - smallest["worlds"])
        else:
            m["marginal_bytes_per_world"] = None
    return {
        "meta": {"machine": machine, "settings": settings, "worker_versions": worker_versions,
                 "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
                 "duration_seconds": duration, "notes": notes, "skipped": skipped},
        "throughput": entries(grid, tasks, contenders),
        "scaling": {"throughput": entries(scaling, tasks, contenders), "memory": memory},
        "targets": targets(grid, tasks),
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


def target_lines(results: dict) -> list[str]:
    lines = []
    for t in results["targets"]:
        where = f"{t['worlds']} world{'s' if t['worlds'] > 1 else ''}/{t['threads']}t"
        if not t["at_requested_size"]:
            where += " (requested size not measured)"
        measured = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        verdict = "not measured" if t["met"] is None else ("met" if t["met"] else "NOT MET")
        line = (f"{t['task_label'] + ':':<13} {t['what']:<28} {where:<12} "
                f"measured {measured:>7}  goal >= {t['goal']:<4g}  {verdict:<8}")
        if t["limit_ratio"] is not None:
            line += f"  (the limit itself: {t['limit_ratio']:.2f}x)"
        lines.append(line.rstrip())
    return lines


def markdown(results: dict) -> str:
    meta = results["meta"]
    machine, settings = meta["machine"], meta["settings"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    out = [
        "# joltgym_marl benchmarks",
        "",
        f"- machine: {machine['cpu']}, {machine['logical_cores']} logical cores "
        f"({machine['usable_cores']} usable), Python {machine['python']}",
        f"- versions: {versions}",
        f"- run: {meta['started']}, {meta['duration_seconds'] / 60:.1f} min; "
        f"{settings['rounds']} interleaved round(s), {settings['budget_seconds']} s per measurement "
        f"after a {settings['warmup_seconds']} s warm-up{' (quick mode)' if settings['quick'] else ''}",
    ]
    if meta["skipped"]:
        out.append(f"- skipped: {meta['skipped']}")
    out += ["", "## Targets", "",
            "Ratios at 64 worlds and 2 threads (single core: 1 world, 1 thread), medians over rounds of "
            "ratios measured back to back; \"best\" takes the faster reference mode in each round. "
            "In brackets, the same ratio for the C++ limit: no implementation can exceed it here.", "",
            "```", *target_lines(results), "```", ""]

    out += ["## Throughput", "",
            "Median steps/s over rounds, and in parentheses the ratio to the limit at the same "
            "task, worlds and threads. " + " ".join(meta["notes"][:4]), ""]
    rows = results["throughput"]
    worlds = sorted({r["worlds"] for r in rows})
    for task_label in dict.fromkeys(r["task_label"] for r in rows):
        task_rows = [r for r in rows if r["task_label"] == task_label]
        out += [f"### {task_label} ({task_rows[0]['unit']})", "",
                "| contender | threads | " + " | ".join(f"{w} world{'s' if w > 1 else ''}" for w in worlds) + " |",
                "|---|---|" + "---:|" * len(worlds)]
        order = list(dict.fromkeys(r["contender"] for r in task_rows))
        for contender in sorted(order, key=lambda c: list(_CONTENDER_ORDER).index(c)
                                if c in _CONTENDER_ORDER else 99):
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
        out.append("")

    scaling = results["scaling"]
    if scaling["throughput"]:
        out += ["## Scaling: HalfCheetah, 2 threads", "",
                "| worlds | limit | ours: vector env | ratio |", "|---:|---:|---:|---:|"]
        by = {(r["contender"], r["worlds"]): r for r in scaling["throughput"]}
        for w in sorted({r["worlds"] for r in scaling["throughput"]}):
            limit, ours = by.get(("limit", w)), by.get(("vector", w))
            ratio = ours and ours["ratio_to_limit"]
            out.append(f"| {w} | {rate(limit and limit['median'])} | {rate(ours and ours['median'])} | "
                       f"{'' if ratio is None else f'{ratio:.2f}'} |")
        out.append("")
    if scaling["memory"]:
        out += ["## Memory and construction (our vector env, 2 threads, a fresh process per size)", "",
                "RSS growth: resident set after building N worlds, resetting and stepping them once, "
                "minus before building. Marginal: the growth beyond the smallest size's, per added world.",
                "",
                "| task | worlds | RSS growth | growth / world | marginal / world | construction | reset + 1 step |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        labels = {r["task"]: r["task_label"] for r in rows}
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


_CONTENDER_ORDER = ["limit", "core", "vector", "agent_vec", "gym_loop", "gym_sync", "gym_async",
                    "mj_batch", "envpool_sync", "envpool_async", "supersuit_0", "supersuit_T"]


# -- charts -------------------------------------------------------------------------------------


def charts(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["throughput"]
    threads = 2 if any(r["threads"] == 2 for r in rows) else max((r["threads"] for r in rows), default=1)
    tasks = list(dict.fromkeys(r["task_label"] for r in rows))
    columns = 2
    fig, axes = plt.subplots((len(tasks) + 1) // columns, columns, figsize=(12, 4.5 * ((len(tasks) + 1) // 2)),
                             squeeze=False)
    for ax, task in zip(axes.flat, tasks):
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
    for ax in list(axes.flat)[len(tasks):]:
        ax.axis("off")
    fig.suptitle("Throughput vs number of worlds (median over rounds)")
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)

    scaling = results["scaling"]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(16, 4.5))
    for contender, style in (("limit", {"color": "black", "linestyle": "--"}), ("vector", {})):
        points = sorted((r["worlds"], r["median"]) for r in scaling["throughput"]
                        if r["contender"] == contender and r["median"])
        if points:
            label = next(r["label"] for r in scaling["throughput"] if r["contender"] == contender)
            left.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, **style)
    left.set_title("HalfCheetah throughput, 2 threads")
    left.set_ylabel("env-steps/s")
    for task in dict.fromkeys(m["task"] for m in scaling["memory"]):
        mine = sorted((m for m in scaling["memory"] if m["task"] == task), key=lambda m: m["worlds"])
        worlds = [m["worlds"] for m in mine]
        middle.plot(worlds, [max(m["rss_after"] - m["rss_before"], 1) / 2**20 for m in mine], marker="o", label=task)
        right.plot(worlds, [m["construct_seconds"] * 1000 for m in mine], marker="o", label=task)
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
