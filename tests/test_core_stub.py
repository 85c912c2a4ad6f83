"""The hand-written type stub of ``joltgym_marl._core`` declares every public
name of the compiled module, and every method and property of its classes."""

from __future__ import annotations

import ast
from pathlib import Path

import joltgym_marl._core as core

STUB = Path(core.__file__).with_name("_core.pyi")
SOURCE_STUB = Path(__file__).resolve().parents[1] / "joltgym_marl" / "_core.pyi"


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    path = STUB if STUB.is_file() else SOURCE_STUB
    tree = ast.parse(path.read_text())
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            names.add(target.id)
        if isinstance(node, ast.ClassDef):
            own = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    own.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    own.add(item.target.id)
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            members[node.name] = own | {m for b in bases for m in members.get(b, set())}
    return names, members


def test_every_public_name_is_declared():
    names, _ = _declared()
    public = {n for n in dir(core) if not n.startswith("__")}
    assert public <= names, sorted(public - names)


def test_every_member_of_the_native_classes_is_declared():
    _, members = _declared()
    for cls_name in ("SingleAgentCore", "MultiAgentEnv", "WorldPool", "InfoDecoder", "MaMuJoCoPool"):
        cls = getattr(core, cls_name)
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public <= members[cls_name], (cls_name, sorted(public - members[cls_name]))
