"""MaMuJoCo (multi-agent MuJoCo), natively batched; the public module is
:mod:`joltgym_marl.mamujoco_v1`."""
