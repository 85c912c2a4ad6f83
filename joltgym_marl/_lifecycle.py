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
