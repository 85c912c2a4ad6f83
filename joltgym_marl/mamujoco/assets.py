"""The MJCF of MaMuJoCo's ManySegment robots (FACMAC's many-segment swimmer
and ant), generated for any number of segments.

The models are those Farama's MaMuJoCo generates (so that observations and
physics match it): a swimmer whose hinge axes alternate sign along the
chain, and ants chained torso to torso, each segment a torso and two legs
with four motors. Written out as files in a cache folder, since the robots
load MJCF from a path.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from joltgym_marl.mamujoco.graphs import parse_nxk

_ASSETS = """  <asset>
    <texture builtin="gradient" height="100" rgb1="1 1 1" rgb2="0 0 0" type="skybox" width="100"/>
    <texture builtin="flat" height="1278" mark="cross" markrgb="1 1 1" name="texgeom" random="0.01" rgb1="0.8 0.6 0.4" rgb2="0.8 0.6 0.4" type="cube" width="127"/>
    <texture builtin="checker" height="100" name="texplane" rgb1="0 0 0" rgb2="0.8 0.8 0.8" type="2d" width="100"/>
    <material name="MatPlane" reflectance="0.5" shininess="1" specular="1" texrepeat="{repeat} {repeat}" texture="texplane"/>
    <material name="geom" texture="texgeom" texuniform="true"/>
  </asset>
"""
_LIGHT = ('    <light cutoff="100" diffuse="1 1 1" dir="-0 0 -1.3" directional="true" exponent="1" '
          'pos="0 0 1.3" specular=".1 .1 .1"/>\n')


def swimmer_xml(n_segs: int) -> str:
    if n_segs < 2:
        raise ValueError(f"ManySegmentSwimmer needs at least 2 segments (N*K >= 2), got {n_segs}")

    def segment(name: str, joint: int, axis_sign: int) -> str:
        return (f'<body name="{name}" pos="-1 0 0">'
                '<geom density="1000" fromto="0 0 0 -1 0 0" size="0.1" type="capsule"/>'
                f'<joint axis="0 0 {axis_sign}" limited="true" name="rot{joint}" pos="0 0 0" '
                'range="-100 100" type="hinge"/>')

    chain = "".join(segment(f"mid{i}", i, (-1) ** (i + 1)) for i in range(1, n_segs - 1))
    chain += segment("back", n_segs - 1, 1) + "</body>" + "</body>" * (n_segs - 2)
    motors = "".join(f'    <motor ctrllimited="true" ctrlrange="-1 1" gear="150.0" joint="rot{i}"/>\n'
                     for i in range(n_segs))
    return ('<mujoco model="swimmer">\n'
            '  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>\n'
            '  <option density="4000" integrator="RK4" timestep="0.01" viscosity="0.1"/>\n'
            '  <default>\n'
            '    <geom conaffinity="0" condim="1" contype="0" material="geom" rgba="0.8 0.6 .4 1"/>\n'
            "    <joint armature='0.1'/>\n"
            '  </default>\n' + _ASSETS.format(repeat=30) + '  <worldbody>\n' + _LIGHT +
            '    <geom condim="3" material="MatPlane" name="floor" pos="0 0 -0.1" rgba="0.8 0.9 0.8 1" '
            'size="40 40 0.1" type="plane"/>\n'
            '    <body name="torso" pos="0 0 0">\n'
            '      <camera name="track" mode="trackcom" pos="0 -3 3" xyaxes="1 0 0 0 1 1"/>\n'
            '      <geom density="1000" fromto="1.5 0 0 0.5 0 0" size="0.1" type="capsule"/>\n'
            '      <joint axis="1 0 0" name="slider1" pos="0 0 0" type="slide"/>\n'
            '      <joint axis="0 1 0" name="slider2" pos="0 0 0" type="slide"/>\n'
            '      <joint axis="0 0 1" name="rot" pos="0 0 0" type="hinge"/>\n'
            '      <body name="mid0" pos="0.5 0 0">\n'
            '        <geom density="1000" fromto="0 0 0 -1 0 0" size="0.1" type="capsule"/>\n'
            '        <joint axis="0 0 1" limited="true" name="rot0" pos="0 0 0" range="-100 100" type="hinge"/>\n'
            f'        {chain}\n'
            '      </body>\n    </body>\n  </worldbody>\n'
            f'  <actuator>\n{motors}  </actuator>\n</mujoco>\n')


def _leg(body: str, aux: str, hip: str, ankle: str, geoms: tuple[str, str, str], d: tuple[float, float],
         ankle_axis: str, ankle_range: str, first: bool) -> str:
    """One leg: a thigh stub (from the torso), a hip hinge and an ankle hinge.
    The first segment's legs point diagonally out, the others' sideways."""
    dx, dy = d
    stub = f"{dx:.1f} {dy:.1f}" if first else f"0.0 {dy:.1f}"
    leg_dx = dx if first else -abs(dx)
    return (f'<body name="{body}" pos="0 0 0">'
            f'<geom fromto="0.0 0.0 0.0 {stub} 0.0" name="{geoms[0]}" size="0.08" type="capsule"/>'
            f'<body name="{aux}" pos="{stub} 0">'
            f'<joint axis="0 0 1" name="{hip}" pos="0.0 0.0 0.0" range="-30 30" type="hinge"/>'
            f'<geom fromto="0.0 0.0 0.0 {leg_dx:.1f} {dy:.1f} 0.0" name="{geoms[1]}" size="0.08" type="capsule"/>'
            f'<body pos="{leg_dx:.1f} {dy:.1f} 0">'
            f'<joint axis="{ankle_axis}" name="{ankle}" pos="0.0 0.0 0.0" range="{ankle_range}" type="hinge"/>'
            f'<geom fromto="0.0 0.0 0.0 {2 * leg_dx:.1f} {2 * dy:.1f} 0.0" name="{geoms[2]}" size="0.08" '
            'type="capsule"/></body></body></body>')


def ant_xml(n_segs: int) -> str:
    if n_segs < 1:
        raise ValueError(f"ManySegmentAnt needs at least 1 segment, got {n_segs}")
    first = (_leg("front_left_leg_0", "aux1_0", "hip1_0", "ankle1_0",
                  ("aux1_geom_0", "left_leg_geom_0", "left_ankle_geom_0"), (0.2, 0.2), "-1 1 0", "30 70", True)
             + _leg("right_back_leg_0", "aux2_0", "hip2_0", "ankle2_0",
                    ("aux2_geom_0", "rightback_leg_geom_0", "second_ankle_geom_0"), (0.2, -0.2), "1 1 0",
                    "30 70", True))
    chain = ""
    for i in range(1, n_segs):
        chain += (f'<body name="torso_{i}" pos="-1 0 0">'
                  '<geom density="100" fromto="1 0 0 0 0 0" size="0.1" type="capsule"/>'
                  + _leg(f"front_right_leg_{i}", f"aux_2_{i}", f"hip1_{i}", f"ankle1_{i}",
                         (f"aux1_geom_{i}", f"right_leg_geom_{i}", f"right_ankle_geom_{i}"), (0.2, 0.2),
                         "1 1 0", "-70 -30", False)
                  + _leg(f"back_leg_{i}", f"aux2_{i}", f"hip2_{i}", f"ankle2_{i}",
                         (f"aux2_geom_{i}", f"back_leg_geom_{i}", f"third_ankle_geom_{i}"), (0.2, -0.2),
                         "-1 1 0", "-70 -30", False))
    chain += "</body>" * (n_segs - 1)
    motors = "".join(f'    <motor ctrllimited="true" ctrlrange="-1.0 1.0" joint="{j}_{i}" gear="150"/>\n'
                     for i in range(n_segs) for j in ("hip1", "ankle1", "hip2", "ankle2"))
    return ('<mujoco model="ant">\n  <size nconmax="200"/>\n'
            '  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>\n'
            '  <option integrator="RK4" timestep="0.01"/>\n'
            '  <custom>\n    <numeric data="0.0 0.0 0.55 1.0 0.0 0.0 0.0 0.0 1.0 0.0 -1.0 0.0 -1.0 0.0 1.0" '
            'name="init_qpos"/>\n  </custom>\n'
            '  <default>\n    <joint armature="1" damping="1" limited="true"/>\n'
            '    <geom conaffinity="0" condim="3" density="5.0" friction="1 0.5 0.5" margin="0.01" '
            'rgba="0.8 0.6 0.4 1"/>\n  </default>\n' + _ASSETS.format(repeat=60) + '  <worldbody>\n' + _LIGHT +
            '    <geom conaffinity="1" condim="3" material="MatPlane" name="floor" pos="0 0 0" '
            'rgba="0.8 0.9 0.8 1" size="40 40 40" type="plane"/>\n'
            '    <body name="torso_0" pos="0 0 0.75">\n'
            '      <camera name="track" mode="trackcom" pos="0 -3 0.3" xyaxes="1 0 0 0 0 1"/>\n'
            '      <joint armature="0" damping="0" limited="false" margin="0.01" name="root" pos="0 0 0" '
            'type="free"/>\n'
            f'      {first}\n      {chain}\n    </body>\n  </worldbody>\n'
            f'  <actuator>\n{motors}  </actuator>\n</mujoco>\n')


def _cache_dir() -> Path:
    folder = Path(os.environ.get("JOLTGYM_MAMUJOCO_CACHE", Path(tempfile.gettempdir()) / "joltgym_marl_mamujoco"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def many_segment_xml(scenario: str, agent_conf) -> str:
    """The path of the generated MJCF of a ManySegment scenario sized by its conf."""
    n_agents, per_agent = parse_nxk(scenario, agent_conf)
    n = n_agents * per_agent
    text = swimmer_xml(n) if scenario == "ManySegmentSwimmer" else ant_xml(n)
    return _cached(text, f"{scenario}_{n}")


def _cached(text: str, stem: str) -> str:
    """The path of ``text`` written once into the cache as ``<stem>_<digest>.xml``
    (atomically: concurrent processes each write a temporary file, then rename)."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = _cache_dir() / f"{stem}_{digest}.xml"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return str(path)


def coupled_half_cheetah_xml(half_cheetah_xml: str) -> str:
    """Two of Gymnasium's half cheetahs (``half_cheetah.xml``, every name suffixed
    0 and 1), at y = -1 and +1, their torsos joined by an elastic spatial
    tendon (stiffness 0.1, length limited to [1.5, 3.5]): MaMuJoCo's
    CoupledHalfCheetah."""
    import copy
    import xml.etree.ElementTree as ET

    root = ET.fromstring(half_cheetah_xml)
    root.set("model", "coupled_cheetah")
    world = root.find("worldbody")
    torso = world.find("body")
    world.remove(torso)
    actuator = root.find("actuator")
    motors = list(actuator)
    for m in motors:
        actuator.remove(m)
    for c, y in ((0, "-1"), (1, "1")):
        body = copy.deepcopy(torso)
        for element in body.iter():
            for attr in ("name", "joint"):
                if attr in element.attrib:
                    element.set(attr, element.get(attr) + str(c))
        x, _, z = body.get("pos").split()
        body.set("pos", f"{x} {y} {z}")
        body.insert(0, ET.Element("site", {"name": f"t{c}", "pos": "0 0 0", "size": "0.1"}))
        world.append(body)
    for c in (0, 1):
        for m in motors:
            motor = copy.deepcopy(m)
            motor.set("name", m.get("name") + str(c))
            motor.set("joint", m.get("joint") + str(c))
            actuator.append(motor)
    tendon = ET.Element("tendon")
    spatial = ET.SubElement(tendon, "spatial", {"name": "tendon0", "width": "0.05", "rgba": ".95 .3 .3 1",
                                                "limited": "true", "range": "1.5 3.5", "stiffness": "0.1"})
    ET.SubElement(spatial, "site", {"site": "t0"})
    ET.SubElement(spatial, "site", {"site": "t1"})
    root.insert(list(root).index(actuator), tendon)
    return ET.tostring(root, encoding="unicode")


def coupled_half_cheetah_path() -> str:
    from joltgym_marl import ASSET_DIR

    text = coupled_half_cheetah_xml((Path(ASSET_DIR) / "half_cheetah.xml").read_text())
    return _cached(text, "CoupledHalfCheetah")
