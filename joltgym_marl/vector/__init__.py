"""Native vector envs: ``NativeVectorEnv`` (one ``<Title>VectorEnv`` per
registered single-agent task) and the flat agent vector env of the games, and the SB3 ``VecEnv`` of the single-agent tasks."""

from joltgym_marl.vector.agent_vector_env import AgentInfos, AgentVectorEnv, make_agent_vec_env
from joltgym_marl.vector.native_vector_env import VECTOR_CLASSES, NativeVectorEnv
from joltgym_marl.vector.sb3_vec_env import make_sb3_vec_env

globals().update({cls.__name__: cls for cls in VECTOR_CLASSES.values()})

__all__ = ["AgentInfos", "AgentVectorEnv", "NativeVectorEnv", "VECTOR_CLASSES", "make_agent_vec_env", "make_sb3_vec_env",
           *(cls.__name__ for cls in VECTOR_CLASSES.values())]
