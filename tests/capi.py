"""libjoltgym_marl (the C API, include/joltgym_marl.h) built and loaded through ctypes.

`build_library()` configures build/capi with CMake *without Python*
(-DJOLTGYM_BUILD_PYTHON=OFF, MuJoCo's folder given as JOLTGYM_MUJOCO_DIR) and
builds the library, the C example and the C error-path test; `Library` wraps
the library's functions with their argument types.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "capi"

JG_OK = 0
STATUS = {0: "JG_OK", 1: "JG_ERR_VALUE", 2: "JG_ERR_TYPE", 3: "JG_ERR_INDEX", 4: "JG_ERR_STATE",
          5: "JG_ERR_FILE_NOT_FOUND", 6: "JG_ERR_MUJOCO", 7: "JG_ERR_OUT_OF_MEMORY", 8: "JG_ERR_HANDLE",
          9: "JG_ERR_BUSY", 10: "JG_ERR_NULL", 11: "JG_ERR_INTERNAL"}


def mujoco_dir() -> str:
    import mujoco  # only to locate its folder (libmujoco.so.*, include/) for CMake

    return str(Path(mujoco.__file__).parent)


def build_library(folder: Path = BUILD, *targets: str, sanitize: bool = False) -> Path:
    """Configures `folder` without Python and builds `targets` (default: the library)."""
    from sanitizers import exclusive, tool

    configure = [tool("cmake"), "-S", str(ROOT), "-B", str(folder),
                 "-DCMAKE_BUILD_TYPE=" + ("RelWithDebInfo" if sanitize else "Release"),
                 "-DJOLTGYM_BUILD_PYTHON=OFF", f"-DJOLTGYM_MUJOCO_DIR={mujoco_dir()}", "-DJOLTGYM_WERROR=ON",
                 f"-DJOLTGYM_SANITIZE={'ON' if sanitize else 'OFF'}",
                 # The benchmarks' raw-engine limit is built in build/capi too
                 # (benchmarks/_native_build.py, the same options).
                 "-DJOLTGYM_BUILD_NATIVE_TESTS=ON",
                 # No Python at all: a stale cache entry must not bring it back.
                 "-UPython_EXECUTABLE"]
    with exclusive(folder):
        configured = subprocess.run(configure, capture_output=True, text=True)
        assert configured.returncode == 0, configured.stdout[-4000:] + configured.stderr[-4000:]
        cache = (folder / "CMakeCache.txt").read_text()
        assert "Python_EXECUTABLE:" not in cache, "the C API build looked for Python"
        command = [tool("cmake"), "--build", str(folder), "-j2"]
        for target in targets or ("joltgym_marl",):
            command += ["--target", target]
        built = subprocess.run(command, capture_output=True, text=True)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return folder


class Dims(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in ("num_envs", "num_agents", "obs_dim", "act_dim", "info_width",
                                                     "num_info_fields", "num_threads", "max_episode_steps")] + \
               [("dt", ctypes.c_double), ("batch_size", ctypes.c_int32), ("real_size", ctypes.c_int32)]


class Config(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32), ("max_episode_steps", ctypes.c_int32),
                ("autoreset_mode", ctypes.c_char_p), ("batch_size", ctypes.c_int32), ("dtype", ctypes.c_char_p)]


class TaskInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p), ("title", ctypes.c_char_p),
                ("env_id", ctypes.c_char_p), ("reference_id", ctypes.c_char_p), ("agent_prefix", ctypes.c_char_p),
                ("max_episode_steps", ctypes.c_int32), ("num_params", ctypes.c_int32), ("doc", ctypes.c_char_p)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p), ("default_json", ctypes.c_char_p),
                ("doc", ctypes.c_char_p)]


class InfoField(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p)] + [(n, ctypes.c_int32) for n in
                                               ("offset", "size", "at_reset", "kind", "num_labels")]


BUFFER_FIELDS = [("obs", ctypes.c_float), ("reward", ctypes.c_float), ("terminated", ctypes.c_bool),
                 ("truncated", ctypes.c_bool), ("info", ctypes.c_double), ("final_obs", ctypes.c_float),
                 ("final_info", ctypes.c_double), ("reset_kind", ctypes.c_uint8), ("unstable", ctypes.c_bool),
                 ("elapsed", ctypes.c_int32), ("obs64", ctypes.c_double), ("reward64", ctypes.c_double),
                 ("final_obs64", ctypes.c_double)]
# The float64 layout's fields, and the names they stand for (Python's).
FLOAT64_FIELDS = {"obs64": "obs", "reward64": "reward", "final_obs64": "final_obs"}


def layout_fields(real_size: int) -> list[tuple[str, type, str]]:
    """(C field, element type, Python name) of the fields a pool of that layout uses."""
    unused = set(FLOAT64_FIELDS.values()) if real_size == 8 else set(FLOAT64_FIELDS)
    return [(name, kind, FLOAT64_FIELDS.get(name, name)) for name, kind in BUFFER_FIELDS if name not in unused]


class Buffers(ctypes.Structure):
    _fields_ = [(name, ctypes.POINTER(kind)) for name, kind in BUFFER_FIELDS]


class BufferSizes(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name, _ in BUFFER_FIELDS]


class CapiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"{STATUS.get(status, status)}: {message}")
        self.status = STATUS.get(status, str(status))
        self.message = message


class Library:
    """The C API's functions, each raising CapiError(status, jg_last_error()) on failure."""

    def __init__(self, path: Path):
        self.path = path
        lib = self.lib = ctypes.CDLL(str(path))
        c = ctypes
        u64, i32, st = c.c_uint64, c.c_int32, c.c_int
        sig = {
            "jg_abi_version": (c.c_uint32, []),
            "jg_version": (c.c_char_p, []),
            "jg_mujoco_version": (c.c_char_p, []),
            "jg_status_name": (c.c_char_p, [st]),
            "jg_last_error": (c.c_char_p, []),
            "jg_last_warnings": (c.c_char_p, []),
            "jg_set_asset_dir": (st, [c.c_char_p]),
            "jg_task_count": (st, [c.POINTER(i32)]),
            "jg_task_name": (st, [i32, c.POINTER(c.c_char_p)]),
            "jg_task_info_get": (st, [c.c_char_p, c.POINTER(TaskInfo)]),
            "jg_task_param": (st, [c.c_char_p, i32, c.POINTER(ParamInfo)]),
            "jg_tasks_json": (st, [c.POINTER(c.c_char_p)]),
            "jg_pool_create": (st, [c.c_char_p, i32, c.POINTER(Config), c.POINTER(c.c_char_p),
                                    c.POINTER(c.c_char_p), i32, c.POINTER(u64)]),
            "jg_pool_create_json": (st, [c.c_char_p, i32, c.POINTER(Config), c.c_char_p, c.POINTER(u64)]),
            "jg_pool_close": (st, [u64]),
            "jg_pool_dims": (st, [u64, c.POINTER(Dims)]),
            "jg_pool_action_bounds": (st, [u64, c.c_void_p, c.c_void_p, c.c_size_t]),
            "jg_pool_info_field": (st, [u64, i32, c.POINTER(InfoField)]),
            "jg_pool_info_label": (st, [u64, i32, i32, c.POINTER(c.c_char_p)]),
            "jg_pool_buffers": (st, [u64, c.POINTER(Buffers)]),
            "jg_pool_use_buffers": (st, [u64, c.POINTER(Buffers), c.POINTER(BufferSizes)]),
            "jg_pool_reset": (st, [u64, i32, u64]),
            "jg_pool_reset_one": (st, [u64, i32, i32, u64]),
            "jg_pool_step": (st, [u64, c.c_void_p, c.c_size_t]),
            "jg_pool_send": (st, [u64, c.c_void_p, c.c_size_t, c.c_void_p, c.c_size_t]),
            "jg_pool_recv": (st, [u64, c.POINTER(c.POINTER(i32)), c.POINTER(Buffers)]),
            "jg_pool_async_reset": (st, [u64, i32, u64]),
            "jg_pool_in_flight": (st, [u64, c.POINTER(i32)]),
            "jg_pool_batch_buffers": (st, [u64, c.POINTER(c.POINTER(i32)), c.POINTER(Buffers)]),
            "jg_pool_use_batch_buffers": (st, [u64, c.c_void_p, c.c_size_t, c.POINTER(Buffers),
                                               c.POINTER(BufferSizes)]),
        }
        for name, (restype, argtypes) in sig.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes

    def error(self) -> str:
        return self.lib.jg_last_error().decode()

    def warnings(self) -> str:
        return self.lib.jg_last_warnings().decode()

    def call(self, name: str, *args) -> None:
        status = getattr(self.lib, name)(*args)
        if status != JG_OK:
            raise CapiError(status, self.error())

    def tasks(self) -> dict:
        out = ctypes.c_char_p()
        self.call("jg_tasks_json", ctypes.byref(out))
        return json.loads(out.value)

    def create(self, task: str, num_envs: int, *, num_threads: int = 0, max_episode_steps: int = 1000,
               autoreset_mode: str | None = None, batch_size: int = 0, dtype: str | None = None, **kwargs) -> int:
        """A pool from key/value strings (each value as JSON)."""
        config = Config(num_threads, max_episode_steps, autoreset_mode.encode() if autoreset_mode else None,
                        batch_size, dtype.encode() if dtype is not None else None)
        keys = (ctypes.c_char_p * max(len(kwargs), 1))(*[k.encode() for k in kwargs])
        values = (ctypes.c_char_p * max(len(kwargs), 1))(*[v.encode() for v in kwargs.values()])
        handle = ctypes.c_uint64()
        self.call("jg_pool_create", task.encode(), num_envs, ctypes.byref(config), keys, values, len(kwargs),
                  ctypes.byref(handle))
        return handle.value

    def create_json(self, task: str, num_envs: int, kwargs_json: str | None, **config) -> int:
        c = Config(config.get("num_threads", 0), config.get("max_episode_steps", 1000),
                   config["autoreset_mode"].encode() if config.get("autoreset_mode") else None,
                   config.get("batch_size", 0), config["dtype"].encode() if config.get("dtype") is not None else None)
        handle = ctypes.c_uint64()
        self.call("jg_pool_create_json", task.encode(), num_envs, ctypes.byref(c),
                  None if kwargs_json is None else kwargs_json.encode(), ctypes.byref(handle))
        return handle.value

    def dims(self, pool: int) -> Dims:
        d = Dims()
        self.call("jg_pool_dims", pool, ctypes.byref(d))
        return d

    def buffers(self, pool: int) -> dict[str, np.ndarray]:
        """The pool's buffers as NumPy views (no copy), shaped as in Python."""
        b = Buffers()
        self.call("jg_pool_buffers", pool, ctypes.byref(b))
        return self.views(pool, b, self.dims(pool).num_envs)

    def views(self, pool: int, b: Buffers, rows: int) -> dict[str, np.ndarray]:
        """NumPy views (no copy) of buffers for `rows` worlds of `pool`, by
        Python's names ("obs" is obs64's view in a float64 pool). The fields of
        the layout not in use must be NULL."""
        d = self.dims(pool)
        n, a = rows, d.num_agents
        shapes = {"obs": (n, a, d.obs_dim), "reward": (n, a), "terminated": (n, a), "truncated": (n, a),
                  "info": (n, a, d.info_width), "final_obs": (n, a, d.obs_dim), "final_info": (n, a, d.info_width),
                  "reset_kind": (n,), "unstable": (n,), "elapsed": (n,)}
        used = layout_fields(d.real_size)
        for field, _, _ in used:
            assert bool(getattr(b, field)), f"{field} is NULL"
        for field in {name for name, _ in BUFFER_FIELDS} - {field for field, _, _ in used}:
            assert not bool(getattr(b, field)), f"{field} is set in a pool of real_size {d.real_size}"
        return {py: np.ctypeslib.as_array(getattr(b, field), shape=shapes[py]) for field, _, py in used}

    def caller_buffers(self, pool: int, arrays: dict[str, np.ndarray]) -> tuple[Buffers, BufferSizes]:
        """jg_buffers and jg_buffer_sizes over `arrays` (by Python's names, as views() gives them)."""
        used = layout_fields(self.dims(pool).real_size)
        b = Buffers(**{field: arrays[py].ctypes.data_as(ctypes.POINTER(kind)) for field, kind, py in used if py in arrays})
        sizes = BufferSizes(**{field: arrays[py].size for field, _, py in used if py in arrays})
        return b, sizes

    def reset(self, pool: int, seed: int | None = None) -> None:
        self.call("jg_pool_reset", pool, int(seed is not None), 0 if seed is None else seed)

    def reset_one(self, pool: int, index: int, seed: int | None = None) -> None:
        self.call("jg_pool_reset_one", pool, index, int(seed is not None), 0 if seed is None else seed)

    def step(self, pool: int, actions: np.ndarray) -> None:
        actions = np.ascontiguousarray(actions, dtype=np.float32)
        self.call("jg_pool_step", pool, actions.ctypes.data, actions.size)

    def close(self, pool: int) -> None:
        self.call("jg_pool_close", pool)

    # -- asynchronous stepping --

    def send(self, pool: int, actions: np.ndarray, env_ids) -> None:
        actions = np.ascontiguousarray(actions, dtype=np.float32)
        ids = np.ascontiguousarray(env_ids, dtype=np.int32)
        self.call("jg_pool_send", pool, actions.ctypes.data, actions.size, ids.ctypes.data, ids.size)

    def recv(self, pool: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(env_ids, batch buffers): NumPy views of the pool's batch buffers (no copy)."""
        ids = ctypes.POINTER(ctypes.c_int32)()
        b = Buffers()
        self.call("jg_pool_recv", pool, ctypes.byref(ids), ctypes.byref(b))
        rows = self.dims(pool).batch_size
        return np.ctypeslib.as_array(ids, shape=(rows,)), self.views(pool, b, rows)

    def batch_buffers(self, pool: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The batch buffers recv writes, as NumPy views (no copy), without receiving."""
        ids = ctypes.POINTER(ctypes.c_int32)()
        b = Buffers()
        self.call("jg_pool_batch_buffers", pool, ctypes.byref(ids), ctypes.byref(b))
        rows = self.dims(pool).batch_size
        return np.ctypeslib.as_array(ids, shape=(rows,)), self.views(pool, b, rows)

    def async_reset(self, pool: int, seed: int | None = None) -> None:
        self.call("jg_pool_async_reset", pool, int(seed is not None), 0 if seed is None else seed)

    def in_flight(self, pool: int) -> int:
        count = ctypes.c_int32()
        self.call("jg_pool_in_flight", pool, ctypes.byref(count))
        return count.value
