"""One mechanism for what every env object needs: pickling by re-creation from
its constructor arguments (SuperSuit copies envs with cloudpickle), and a clear
error when it is used after ``close()``."""

from __future__ import annotations

from typing import Any

from joltgym_marl._native import core as _core


class Reconstructible:
    """Mixin: ``_remember(**kwargs)`` in ``__init__``; pickles as ``type(self)(**kwargs)``."""

    _closed: bool = False
    _init_kwargs: dict[str, Any]

    def _remember(self, **kwargs: Any) -> None:
        self._init_kwargs = dict(kwargs)

    def __reduce__(self):
        return (restore, (type(self), self._init_kwargs))

    def _check_open(self) -> None:
        if self._closed:
            raise _core.StateError(f"{type(self).__name__} is closed; expected an open env (create a new one)")


def restore(cls: type, kwargs: dict[str, Any]):
    """Re-creates an object from its class and constructor keyword arguments."""
    return cls(**kwargs)


class WrapperRandom:
    """Mixin: ``np_random``, the generator a PettingZoo env offers the wrappers
    that draw their own randomness (SuperSuit's ``frame_skip_v0`` reads
    ``env.unwrapped.np_random``). Seeded by ``reset(seed=...)`` (the subclass
    calls :meth:`_seed_wrapper_random`), from the OS's entropy until then. The
    worlds' own noise comes from their native RNGs, never from this one."""

    _np_random = None

    @property
    def np_random(self):
        if self._np_random is None:
            self._seed_wrapper_random(None)
        return self._np_random

    def _seed_wrapper_random(self, seed: int | None) -> None:
        from gymnasium.utils import seeding

        self._np_random, _ = seeding.np_random(seed)
