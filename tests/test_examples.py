"""The example scripts run, in their --quick modes, as a user would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import joltgym_marl

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def launch(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # A script puts its own folder first on sys.path, so it would import the
    # installed joltgym_marl even when this session tests the source tree:
    # PYTHONPATH makes it import the same package as this session.
    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def run(script: str, *args: str, cwd: Path) -> str:
    proc = launch(script, *args, cwd=cwd)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_help(tmp_path, script):
    out = run(script, "--help", cwd=tmp_path)
    assert out.startswith(f"usage: {script}"), out[:500]
    assert len(out.splitlines()) > 3  # and what it does, from its docstring
    assert not list(tmp_path.iterdir())  # --help does nothing else


def test_demo(tmp_path):
    out = run("demo.py", cwd=tmp_path)  # as the README's set-up command 1 runs it
    assert "cheetah_race_v0: 4 HalfCheetahs in one world" in out
    assert re.search(r"\ncheetah_\d (wins|leads at the time limit) after \d+ steps", out), out
    assert re.search(r"\n64 races x 4 agents on \d+ native threads: [\d,]+ agent-steps/s", out), out


def win_draw_loss(table: str) -> tuple[int, int, int]:
    """The first player's row of evaluate.py's table."""
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 3, table  # header and one row per player
    win, draw, loss = (int(x) for x in rows[1].split("|")[2:5])
    return win, draw, loss


@pytest.mark.slow
def test_selfplay_sumo_quick(tmp_path):
    out = run("selfplay_sumo.py", "--quick", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert "untrained learner  vs still W/D/L" in out and "done:" in out
    checkpoint = tmp_path / "run" / "checkpoints" / "latest.pt"
    assert checkpoint.exists()
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    evaluate = ("--episodes", "8", "--worlds", "8")
    # A random Ant throws itself over within a few dozen steps; the checkpoint's
    # policy (barely trained: it acts near zero) keeps its feet and wins. A
    # checkpoint that loaded as garbage, or outcomes counted wrongly, would not.
    win, draw, loss = win_draw_loss(run("evaluate.py", str(checkpoint), "random", *evaluate, cwd=tmp_path))
    assert win + draw + loss == 8 and win >= 6, (win, draw, loss)
    # Two still Ants never leave the ring: every bout is a draw at max_cycles.
    assert win_draw_loss(run("evaluate.py", "still", "still", *evaluate, cwd=tmp_path)) == (0, 8, 0)


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", [[], ["--supersuit"]], ids=["native", "supersuit"])
def test_train_race_sb3_quick(tmp_path, pipeline):
    out = run("train_race_sb3.py", "--quick", "--save", str(tmp_path / "race.zip"), *pipeline, cwd=tmp_path)
    assert "4 races x 4 cheetahs = 16 rows" in out
    assert re.search(r"mean forward velocity before training: [-+]\d+\.\d+ m/s", out), out
    assert re.search(r"mean forward velocity after training: +[-+]\d+\.\d+ m/s", out), out
    # Training moved the policy: its deterministic actions on the same
    # observations changed (a run whose updates never reached the policy, or
    # that saw no rows, would leave them exactly as they were).
    change = float(re.search(r"policy change: mean \|action after - before\| = (\S+) over the 1,600 ", out).group(1))
    assert change > 1e-4, out
    from stable_baselines3 import PPO

    model = PPO.load(tmp_path / "race.zip", device="cpu")
    assert model.observation_space.shape == (17 + 2 * 3,) and model.action_space.shape == (6,)


def read_frames(path: Path, width: int, height: int) -> list[np.ndarray]:
    """The RGB frames of a GIF or an MP4 file.

    An MP4 is decoded by imageio-ffmpeg's ffmpeg run to completion with
    ``subprocess.run``: imageio's streaming reader leaves its ffmpeg process to
    be killed and reaped after ``close()``, which under CPU load is still running
    when the reader is collected (a ResourceWarning, an error here).
    """
    if path.suffix == ".gif":
        import imageio.v2 as imageio

        return list(imageio.mimread(path))
    import imageio_ffmpeg

    decoded = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-f", "rawvideo",
                              "-pix_fmt", "rgb24", "-"], capture_output=True, check=True, timeout=120)
    frame_bytes = width * height * 3
    assert len(decoded.stdout) % frame_bytes == 0, (len(decoded.stdout), frame_bytes)
    pixels = np.frombuffer(decoded.stdout, np.uint8).reshape(-1, height, width, 3)
    return list(pixels)


@pytest.mark.parametrize("env, extra", [
    ("cheetah_race_v0", ["--num-agents", "3", "--layout", "shared_track", "--out", "race.gif"]),
    ("sumo_v0", ["--out", "sumo.mp4"]),
    ("joltgym_marl/Ant-v0", ["--out", "ant.gif"]),
])
def test_record_video(tmp_path, env, extra):
    out = run("record_video.py", env, "--steps", "12", "--width", "96", "--height", "64", *extra, cwd=tmp_path)
    path = tmp_path / extra[-1]
    assert f"to {path.name}" in out and path.stat().st_size > 1000
    frames = read_frames(path, width=96, height=64)
    assert len(frames) >= 5 and frames[0].shape[:2] == (64, 96)
    assert not all((f == frames[0]).all() for f in frames[1:])


PROGRESS = re.compile(r"^iteration (\d+)/(\d+) global_step=(\d+) episodes=(\d+) episodic_return=(\S+) .*"
                      r"value_loss=(\S+) policy_loss=(\S+) approx_kl=(\S+)", re.MULTILINE)


def progress_lines(out: str) -> list[tuple]:
    """(iteration, iterations, global_step, episodes, mean return or None, losses...) per progress line."""
    lines = []
    for it, total, step, episodes, ret, *losses in PROGRESS.findall(out):
        lines.append((int(it), int(total), int(step), int(episodes), None if ret == "n/a" else float(ret),
                      *(float(x) for x in losses)))
    return lines


def test_cleanrl_ppo_continuous(tmp_path):
    """A few thousand steps on Hopper (random-action episodes end within a few
    dozen steps): a progress line per iteration, episodic returns recorded by
    Gymnasium's RecordEpisodeStatistics on our vector env, finite losses."""
    out = run("cleanrl_ppo_continuous.py", "--env-id", "joltgym_marl/Hopper-v0", "--total-timesteps", "2048",
              "--num-envs", "4", "--num-steps", "128", "--num-minibatches", "4", "--update-epochs", "2",
              "--num-threads", "2", "--save-model", str(tmp_path / "agent.pt"), cwd=tmp_path)
    lines = progress_lines(out)
    assert [line[:3] for line in lines] == [(1, 4, 512), (2, 4, 1024), (3, 4, 1536), (4, 4, 2048)], out
    assert sum(line[3] for line in lines) >= 8, out
    assert all(line[4] is None or np.isfinite(line[4]) for line in lines)
    assert all(np.isfinite(x) for line in lines for x in line[5:]), out
    assert "done: 2048 steps" in out
    import torch

    checkpoint = torch.load(tmp_path / "agent.pt", weights_only=True)  # tensors and plain values only
    assert checkpoint["agent"]["actor_mean.0.weight"].shape == (64, 11)
    assert (checkpoint["env_id"], checkpoint["engine"], checkpoint["global_step"]) == ("joltgym_marl/Hopper-v0",
                                                                                      "mujoco", 2048)
    # The observation normalizer's statistics as training left them (not the initial zeros and ones).
    assert checkpoint["obs_mean"].shape == checkpoint["obs_var"].shape == (11,)
    assert checkpoint["obs_mean"].abs().max() > 0 and (checkpoint["obs_var"] != 1).all()


@pytest.mark.slow
def test_cleanrl_ppo_continuous_learns_inverted_pendulum(tmp_path):
    """The easy task: a random policy balances the pole for about 7 steps;
    twelve iterations of PPO (12k steps, ~10 s) keep it up for far longer."""
    out = run("cleanrl_ppo_continuous.py", "--env-id", "joltgym_marl/InvertedPendulum-v0",
              "--total-timesteps", "12288", "--num-envs", "8", "--num-steps", "128", "--num-minibatches", "8",
              "--num-threads", "2", cwd=tmp_path)
    returns = [line[4] for line in progress_lines(out) if line[4] is not None]
    assert len(returns) >= 8, out
    first, last = returns[0], float(np.mean(returns[-3:]))
    assert first < 15 and last > 4 * first and last > 40, out


def fails(script: str, *args: str, cwd: Path) -> str:
    """A script run that should stop with a usage error: its stderr."""
    proc = launch(script, *args, cwd=cwd)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stderr


EVALUATION_ROW = re.compile(r"^\| (\S+) \| (\S+) \| (\S+) \| (\d+) \| (\S+) ± (\S+) \| (\S+) ± (\S+) "
                            r"\| (\S+) ± (\S+) \|$", re.MULTILINE)


def plain_loop_episodes(checkpoint_path: Path, engine: str, seeds: list[int]) -> tuple[list[float], list[int]]:
    """The oracle of evaluate.py's single-agent rows: one gymnasium.make env, one episode per seed,
    the checkpoint's actor mean applied to observations normalized by its saved statistics."""
    import gymnasium as gym
    import torch

    checkpoint = torch.load(checkpoint_path, weights_only=True)
    weights = {k[len("actor_mean."):]: v for k, v in checkpoint["agent"].items() if k.startswith("actor_mean.")}
    obs_dim, act_dim = checkpoint["obs_dim"], checkpoint["act_dim"]
    actor = torch.nn.Sequential(torch.nn.Linear(obs_dim, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                                torch.nn.Tanh(), torch.nn.Linear(64, act_dim))
    actor.load_state_dict(weights)
    mean, var = checkpoint["obs_mean"].numpy(), checkpoint["obs_var"].numpy()
    env = gym.make(checkpoint["env_id"], engine=engine)
    returns, lengths = [], []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        total, done, length = 0.0, False, 0
        while not done:
            z = np.clip((obs - mean) / np.sqrt(var + checkpoint["obs_epsilon"]), -10, 10)
            with torch.no_grad():
                action = actor(torch.as_tensor(z, dtype=torch.float32)).numpy()
            obs, reward, terminated, truncated, _ = env.step(np.clip(action, -1, 1))
            total, length = total + float(reward), length + 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(length)
    env.close()
    return returns, lengths


def test_evaluate_replays_a_ppo_policy_on_jolt_and_mujoco(tmp_path):
    """A policy trained (two updates) on Jolt, saved by cleanrl_ppo_continuous.py and replayed
    by evaluate.py on both engines: each row's mean and std return over the seeded episodes
    (three Hopper episodes of different lengths, on batches of two worlds) are a plain
    gymnasium.make loop's on the same seeds; the default engine is the training one; a bad
    engine, a task Jolt does not run and a file that is no checkpoint are refused by name."""
    agent = tmp_path / "agent.pt"
    run("cleanrl_ppo_continuous.py", "--env-id", "joltgym_marl/Hopper-v0", "--engine", "jolt",
        "--total-timesteps", "256", "--num-envs", "2", "--num-steps", "128", "--num-minibatches", "2",
        "--update-epochs", "1", "--num-threads", "1", "--save-model", str(agent), cwd=tmp_path)
    out = run("evaluate.py", str(agent), "--engine", "jolt", "mujoco", "--episodes", "3", "--worlds", "2",
              "--seed", "7", "--threads", "1", cwd=tmp_path)
    assert "joltgym_marl/Hopper-v0: agent.pt (PPO trained on jolt for 256 steps" in out, out
    rows = EVALUATION_ROW.findall(out)
    assert [row[:4] for row in rows] == [("agent.pt", "jolt", "jolt", "3"), ("agent.pt", "jolt", "mujoco", "3")], out
    for row in rows:
        returns, lengths = plain_loop_episodes(agent, row[2], [7, 8, 9])
        assert float(row[4].replace(",", "")) == pytest.approx(np.mean(returns), abs=0.051), (row, returns)
        assert float(row[5].replace(",", "")) == pytest.approx(np.std(returns), abs=0.051), (row, returns)
        assert (row[6], row[7]) == (f"{np.mean(lengths):,.0f}", f"{np.std(lengths):,.0f}"), (row, lengths)
        assert len(set(lengths)) > 1, lengths  # the episodes end at different steps: the masking is tested
    # The default engine is the training one; an episode is the same whatever batch it runs in.
    default = EVALUATION_ROW.findall(run("evaluate.py", str(agent), "--episodes", "1", "--seed", "8", cwd=tmp_path))
    assert [row[:5] for row in default] == [("agent.pt", "jolt", "jolt", "1",
                                             f"{plain_loop_episodes(agent, 'jolt', [8])[0][0]:,.1f}")]

    assert "invalid choice: 'bullet' (choose from 'mujoco', 'jolt')" in fails("evaluate.py", str(agent), "--engine",
                                                                              "bullet", cwd=tmp_path)
    refused = fails("evaluate.py", "random", "--env-id", "joltgym_marl/Reacher-v0", "--engine", "jolt", cwd=tmp_path)
    assert "joltgym_marl/Reacher-v0 does not run on engine 'jolt' (it runs on mujoco)" in refused, refused
    assert "joltgym_marl/HalfCheetah-v0" in refused.split("engine 'jolt' runs")[1], refused
    assert "--env-id should be one of" in fails("evaluate.py", "still", "--env-id", "HalfCheetah", cwd=tmp_path)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert "junk.pt is not a self-play checkpoint" in fails("evaluate.py", str(tmp_path / "junk.pt"), cwd=tmp_path)


def test_cleanrl_ppo_race_native_equals_supersuit(tmp_path):
    """The multi-agent example (parameter sharing over every cheetah of every
    race): races end (max_cycles 100), losses are finite, and training on the
    native agent vector env is the very run SuperSuit's pipeline gives, number
    for number (the same rows, seeds, observations and terminal observations)."""
    args = ("--num-envs", "4", "--num-agents", "2", "--max-cycles", "100", "--num-steps", "128",
            "--total-timesteps", "4096", "--num-minibatches", "8", "--update-epochs", "4", "--num-threads", "2")
    native = run("cleanrl_ppo_race.py", *args, cwd=tmp_path)
    supersuit = run("cleanrl_ppo_race.py", *args, "--supersuit", cwd=tmp_path)
    assert "native agent vector env: 4 races x 2 cheetahs = 8 rows" in native
    assert "SuperSuit concat_vec_envs_v1: 4 races x 2 cheetahs = 8 rows" in supersuit
    lines = progress_lines(native)
    assert len(lines) == 4 and sum(line[3] for line in lines) >= 16, native
    assert all(np.isfinite(x) for line in lines for x in line[5:]), native

    def without_speed(out: str) -> list[str]:
        return [re.sub(r"SPS=\d+ ", "", line) for line in out.splitlines() if line.startswith("iteration ")]

    assert without_speed(native) == without_speed(supersuit)
