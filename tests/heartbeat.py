"""Keeps a long test run visibly alive.

pytest prints a dot when a test ends; a single test that builds the native code
under the sanitizers or trains a policy runs for minutes with nothing on the
screen, which reads as a hang. This plugin (registered by conftest.py) prints
``[still running: <test id>, 2 min]`` once a test has run for a minute, and
every minute after that, from a daemon thread.

Output goes to the terminal's own file descriptor, which pytest's capture
keeps aside while it captures the test's output (without capture, stdout).
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
        self._test: str | None = None
        self._started = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pytest-heartbeat", daemon=True)
        self._thread.start()

    @pytest.hookimpl
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self._lock:
            self._test, self._started = nodeid, time.monotonic()

    @pytest.hookimpl
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        with self._lock:
            self._test = None

    @pytest.hookimpl
    def pytest_unconfigure(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        noticed_at: dict[str, float] = {}
        while not self._stop.wait(5.0):
            with self._lock:
                test, started = self._test, self._started
            if test is None:
                continue
            elapsed = time.monotonic() - started
            last = noticed_at.get(test)
            if elapsed >= FIRST_NOTICE_S and (last is None or elapsed - last >= EVERY_S):
                noticed_at = {test: elapsed}
                minutes = int(elapsed // 60)
                try:
                    os.write(self._fd, f"\n[still running: {test}, {minutes} min]\n".encode())
                except OSError:
                    return


def register(config: pytest.Config) -> None:
    fd = terminal_fd(config)
    if fd is not None and not config.option.collectonly:
        config.pluginmanager.register(Heartbeat(fd), "joltgym-heartbeat")
