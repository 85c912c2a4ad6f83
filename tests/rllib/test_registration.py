"""RLlib env names survive Ray restarts (no module-scoped Ray instance here)."""

from __future__ import annotations

import joltgym_marl.rllib as jr


def test_games_stay_registered_across_ray_restarts():
    """Tune's registry is cleared with the cluster; the games are registered
    again on every ray.init of this process."""
    import ray
    from ray.tune.registry import ENV_CREATOR, _global_registry

    for _ in range(2):
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        try:
            assert all(_global_registry.contains(ENV_CREATOR, name) for name in jr.ENV_NAMES)
        finally:
            ray.shutdown()
