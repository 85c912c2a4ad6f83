"""Checks of what users pass to the Python layers (the vector envs, the SB3 and
RLlib adapters, rendering), in one place and worded as the native core words
its own (``<name> should be <expected>, got <value>``).

Integers are converted once with ``operator.index`` (an exact ``int``, what
an ``int`` subclass's own comparison methods cannot change) and compared
after that, so that a value whose ``<`` lies cannot slip past a range check.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def as_int(value: Any, what: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an exact int in [minimum, maximum] (either end may be open);
    TypeError for a bool or a non-integer, ValueError out of range."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} should be an int, got {type(value).__name__} {_clip(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} should be an int, got {type(value).__name__} {_clip(value)}") from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        if maximum is None:
            expected = f">= {minimum}"
        elif minimum is None:
            expected = f"<= {maximum}"
        else:
            expected = f"in [{minimum}, {maximum}]"
        raise ValueError(f"{what} should be {expected}, got {_clip(value)}")
    return number


def as_index(value: Any, size: int, what: str = "index", *, negative: bool = False) -> int:
    """``value`` as a position in [0, size) (``negative``: also [-size, 0), counted
    from the end, as Python's sequences do); TypeError or IndexError otherwise."""
    low = -size if negative else 0
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} should be an int in [{low}, {size}), got {type(value).__name__} {_clip(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} should be an int in [{low}, {size}), got {type(value).__name__} "
                        f"{_clip(value)}") from None
    if not low <= number < size:
        raise IndexError(f"{what} should be in [{low}, {size}), got {_clip(value)}")
    return number % size if size else number


def as_seed(seed: Any, what: str = "seed") -> int | None:
    """None, or a non-negative int (of any size, as NumPy's SeedSequence takes it)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"{what} should be an int or None, got {type(seed).__name__} {_clip(seed)}")
    try:
        number = operator.index(seed)
    except TypeError:
        raise TypeError(f"{what} should be an int or None, got {type(seed).__name__} {_clip(seed)}") from None
    if number < 0:
        raise ValueError(f"{what} should be a non-negative int, got {_clip(seed)}")
    return number


def as_indices(indices: Any, size: int, what: str = "indices") -> list[int]:
    """SB3's ``indices`` (None: all; an int; or an iterable of ints, each in [-size, size))
    as a list of positions in [0, size)."""
    if indices is None:
        return list(range(size))
    if isinstance(indices, (str, bytes)):
        raise TypeError(f"{what} should be None, an int or a sequence of ints, got {_clip(indices)}")
    if isinstance(indices, (bool, np.bool_)):
        raise TypeError(f"{what} should be None, an int or a sequence of ints, got {_clip(indices)}")
    if not hasattr(indices, "__iter__"):
        indices = [indices]
    try:
        items = list(indices)
    except TypeError:
        raise TypeError(f"{what} should be None, an int or a sequence of ints, got {type(indices).__name__} "
                        f"{_clip(indices)}") from None
    out = []
    for i in items:
        try:
            out.append(as_index(i, size, what, negative=True))
        except TypeError:
            raise TypeError(f"{what} should be ints in [0, {size}), got {type(i).__name__} {_clip(i)}") from None
        except IndexError:
            raise IndexError(f"{what} should be ints in [0, {size}), got {_clip(i)} (negative indices count "
                             f"from the end, down to {-size})") from None
    return out
