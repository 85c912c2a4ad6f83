"""Keeps a long test run visibly alive.

pytest prints a dot when a test ends; a single test that builds the native code
under the sanitizers or trains a policy runs for minutes with nothing on the
screen, which reads as a hang. This plugin (registered by conftest.py) prints
``[still running: <test id>, 2 min]`` once a test has run for a minute, and
every minute after that, from a daemon thread.

With pytest-xdist it runs in the controller only, which hears of every
worker's test starting and ending (a worker's stdout is not the terminal).
Output goes to the terminal's own file descriptor, which pytest's capture
keeps aside while it captures (without capture, stdout).
"""

from __future__ import annotations

import os
import threading
import time

import pytest

FIRST_NOTICE_S = 60.0
EVERY_S = 60.0


def terminal_fd(config: pytest.Config) -> int | None:
    """The file descriptor pytest's own output goes to while tests run."""
    capman = config.pluginmanager.getplugin("capturemanager")
    capturing = getattr(capman, "_global_capturing", None) if capman else None
    if capturing is None:  # -s / --capture=no: stdout is the terminal
        return 1
    saved = getattr(getattr(capturing, "out", None), "targetfd_save", None)
    return saved if isinstance(saved, int) else None


class Heartbeat:
    def __init__(self, fd: int):
        self._fd = fd
        self._lock = threading.Lock()
        self._running: dict[str, float] = {}  # test id -> when it started
        self._noticed: dict[str, float] = {}  # test id -> elapsed at the last notice
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="pytest-heartbeat", daemon=True).start()

    @pytest.hookimpl
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self._lock:
            self._running[nodeid] = time.monotonic()

    @pytest.hookimpl
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        with self._lock:
            self._running.pop(nodeid, None)
            self._noticed.pop(nodeid, None)

    @pytest.hookimpl
    def pytest_unconfigure(self) -> None:
        self._stop.set()

    def _due(self) -> list[tuple[str, float]]:
        now, due = time.monotonic(), []
        with self._lock:
            for test, started in self._running.items():
                elapsed, last = now - started, self._noticed.get(test)
                if elapsed >= FIRST_NOTICE_S and (last is None or elapsed - last >= EVERY_S):
                    self._noticed[test] = elapsed
                    due.append((test, elapsed))
        return due

    def _run(self) -> None:
        while not self._stop.wait(5.0):
            for test, elapsed in self._due():
                try:
                    os.write(self._fd, f"\n[still running: {test}, {int(elapsed // 60)} min]\n".encode())
                except OSError:
                    return


def register(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or config.option.collectonly:
        return  # an xdist worker: the controller reports
    fd = terminal_fd(config)
    if fd is not None:
        config.pluginmanager.register(Heartbeat(fd), "joltgym-heartbeat")
