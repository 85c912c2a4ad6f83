"""Writes the scenes of the competition games' gym-compete form (assets/gym_compete/*.xml).

The scenes are the worlds of openai/multiagent-competition's gym-compete (Bansal et
al. 2018), built here from this project's own robot files (assets/ant.xml,
assets/humanoid.xml, Gymnasium's robots, which are gym-compete's up to the
changes listed in ROBOT_CHANGES) and from the arena geometry its games describe.
Two things are computed rather than written:

* every robot body gets an explicit ``<inertial>`` holding the mass and inertia
  MuJoCo 1.31 gave it (the zoo was trained on 1.31). Before MuJoCo 2.1.1 the
  compiler took a capsule of radius r and length L for a cylinder of length
  L + r (its middle section extended by r / 2 at each end); 2.1.1 made capsules
  exact. Compiling the robot with each capsule replaced by that cylinder makes
  the current compiler compute 1.31's numbers (torso 8.322 kg, pelvis 5.853,
  thigh 4.525 for the humanoid), which are then frozen into the scene;
* sumo's platform, whose radius gym-compete draws each episode, is a set of
  platforms (mocap bodies) on a grid of radii: a world moves the one nearest its
  drawn radius into place and keeps the others parked far above the field.

Run ``python tools/make_gym_compete_scenes.py`` after changing a robot file; the
suite checks that the committed scenes are what this script writes.
"""

from __future__ import annotations

import argparse
import copy
import math
import pathlib
import xml.etree.ElementTree as ET

ASSETS = pathlib.Path(__file__).resolve().parent.parent / "assets"
OUT = ASSETS / "gym_compete"

# Where gym-compete's bodies differ from Gymnasium's: the ant's legs collide
# with each other (geoms of contype 1 and conaffinity 1), the humanoid's left hip
# bends to -120 degrees.
ROBOT_CHANGES = {
    "ant": {"default_geom": {"conaffinity": "1", "contype": "1"}, "joint_range": {}},
    "humanoid": {"default_geom": {}, "joint_range": {"left_hip_y": "-120 20"}},
}
AGENT_RGBA = ("0.5 0.25 0.25 1", "0.25 0.5 0.5 1")

# Sumo platform radii: a grid over the drawn range (the drawn radius is exact in
# the rules and the observation; the physical edge is the nearest grid radius).
PLATFORM_STEP = 0.02
PLATFORM_PARK_Z = 1000.0  # inactive platforms wait here, spread along x
PLATFORM_PARK_SPACING = 20.0
PLATFORM_HALF_HEIGHT = 0.25

# Each scene: robot, timestep, agents as (body prefix, (x, y, z), yaw in
# degrees), and what the field holds. Agents are in this project's agent order
# (you_shall_not_pass: walker first, who is gym-compete's agent 1).
SCENES = {
    "sumo_ants": dict(robot="ant", timestep=0.003, field="platform", radii=(2.5, 4.5),
                      agents=[("ant_0", (-1, 0, 2.5), 180), ("ant_1", (1, 0, 2.5), 180)]),
    "sumo_humans": dict(robot="humanoid", timestep=0.003, field="platform", radii=(1.5, 3.5),
                        agents=[("humanoid_0", (-2, 0, 2.5), 0), ("humanoid_1", (2, 0, 2.5), 180)]),
    "run_to_goal_ants": dict(robot="ant", timestep=0.01, field="lines",
                             agents=[("agent_0", (-1, 0, 0.75), 0), ("agent_1", (1, 0, 0.75), 180)]),
    "run_to_goal_humans": dict(robot="humanoid", timestep=0.003, field="lines",
                               agents=[("agent_0", (-1, 0, 1.4), 0), ("agent_1", (1, 0, 1.4), 180)]),
    "you_shall_not_pass": dict(robot="humanoid", timestep=0.003, field="lines",
                               agents=[("humanoid_0", (1, 0, 1.4), 180), ("humanoid_1", (-1, 0, 1.4), 0)]),
    "kick_and_defend": dict(robot="humanoid", timestep=0.003, field="football",
                            agents=[("humanoid_0", (-3, 0, 1.5), 0), ("humanoid_1", (3, 0, 1.5), 180)]),
}


def fmt(values) -> str:
    return " ".join(repr(float(v)) if not float(v).is_integer() else str(int(v)) for v in values)


def capsule_as_131_cylinder(geom: ET.Element) -> None:
    """Turns a capsule into the cylinder MuJoCo 1.31 took it for (length L + r)."""
    size = [float(s) for s in geom.get("size").split()]
    r = size[0]
    if geom.get("fromto"):
        a = [float(v) for v in geom.get("fromto").split()]
        p0, p1 = a[:3], a[3:]
        length = math.dist(p0, p1)
        scale = (length + r) / length
        mid = [(x + y) / 2 for x, y in zip(p0, p1)]
        half = [(y - x) / 2 * scale for x, y in zip(p0, p1)]
        geom.set("fromto", fmt([m - h for m, h in zip(mid, half)] + [m + h for m, h in zip(mid, half)]))
        geom.set("size", fmt([r]))
    else:
        geom.set("size", fmt([r, size[1] + r / 2]))
    geom.set("type", "cylinder")


def robot_131_inertials(robot_xml: ET.ElementTree) -> dict[str, tuple]:
    """Body name -> (mass, ipos, iquat, diaginertia) as MuJoCo 1.31 computed them."""
    import mujoco

    tree = copy.deepcopy(robot_xml)
    for geom in tree.iter("geom"):
        if geom.get("type") == "capsule":
            capsule_as_131_cylinder(geom)
    model = mujoco.MjModel.from_xml_string(ET.tostring(tree.getroot(), encoding="unicode"))
    torso = model.body("torso").id
    out = {}
    for b in range(model.nbody):
        if model.body_rootid[b] != torso:
            continue
        out[model.body(b).name] = (model.body_mass[b], model.body_ipos[b].copy(), model.body_iquat[b].copy(),
                                   model.body_inertia[b].copy())
    return out


def robot_tree(robot: str) -> ET.ElementTree:
    """The robot file with gym-compete's changes, every body named (for the inertials)."""
    tree = ET.parse(ASSETS / f"{robot}.xml")
    changes = ROBOT_CHANGES[robot]
    geom_default = tree.getroot().find("default").find("geom")
    for key, value in changes["default_geom"].items():
        geom_default.set(key, value)
    for joint in tree.iter("joint"):
        if joint.get("name") in changes["joint_range"]:
            joint.set("range", changes["joint_range"][joint.get("name")])
    for k, body in enumerate(tree.iter("body")):
        if body.get("name") is None:
            body.set("name", f"link{k}")
    # gym-compete uses the files' physics (friction, margins, gears) unchanged.
    return tree


def agent_copy(tree: ET.ElementTree, inertials: dict, prefix: str, pos, yaw: float, rgba: str,
               cls: str) -> tuple[ET.Element, list[ET.Element], list[ET.Element]]:
    root = tree.getroot()
    body = copy.deepcopy(root.find("worldbody").find("body"))
    body.set("pos", fmt(pos))
    body.set("euler", fmt([0, 0, yaw]))
    for parent in body.iter():
        for cam in [c for c in parent if c.tag == "camera"]:
            parent.remove(cam)
    for element in body.iter():
        if element.tag == "body":
            mass, ipos, iquat, inertia = inertials[element.get("name")]
            inertial = ET.Element("inertial", {"pos": fmt(ipos), "quat": fmt(iquat), "mass": fmt([mass]),
                                               "diaginertia": fmt(inertia)})
            element.insert(0, inertial)
        if element.tag == "geom":
            element.set("class", cls)
        if element.get("name") is not None:
            element.set("name", f"{prefix}/{element.get('name')}")
    actuators = []
    for motor in root.find("actuator"):
        m = copy.deepcopy(motor)
        m.set("class", cls)
        m.set("joint", f"{prefix}/{m.get('joint')}")
        if m.get("name"):
            m.set("name", f"{prefix}/{m.get('name')}")
        actuators.append(m)
    tendons = []
    if root.find("tendon") is not None:
        for fixed in root.find("tendon"):
            t = copy.deepcopy(fixed)
            t.set("name", f"{prefix}/{t.get('name')}")
            for j in t:
                j.set("joint", f"{prefix}/{j.get('joint')}")
            tendons.append(t)
    return body, actuators, tendons


def scene(name: str, spec: dict) -> ET.ElementTree:
    robot = robot_tree(spec["robot"])
    inertials = robot_131_inertials(robot)
    mujoco_el = ET.Element("mujoco", {"model": f"gym_compete_{name}"})
    ET.SubElement(mujoco_el, "compiler", {"angle": "degree", "coordinate": "local", "inertiafromgeom": "auto"})
    ET.SubElement(mujoco_el, "option", {"timestep": repr(spec["timestep"]), "integrator": "RK4", "solver": "PGS",
                                        "iterations": "1000"})
    robot_default = robot.getroot().find("default")
    default = ET.SubElement(mujoco_el, "default")
    for child in robot_default:
        if child.tag == "joint":
            default.append(copy.deepcopy(child))
    for k, rgba in enumerate(AGENT_RGBA):
        cls = ET.SubElement(default, "default", {"class": f"agent{k}"})
        for child in robot_default:
            if child.tag == "default":
                continue
            c = copy.deepcopy(child)
            if c.tag == "geom":
                c.set("rgba", rgba)
            cls.append(c)
    asset = ET.SubElement(mujoco_el, "asset")
    ET.SubElement(asset, "texture", {"type": "skybox", "builtin": "gradient", "rgb1": "1 1 1", "rgb2": "0 0 0",
                                     "width": "100", "height": "100"})
    ET.SubElement(asset, "texture", {"name": "texgeom", "type": "cube", "builtin": "flat", "mark": "cross",
                                     "markrgb": "1 1 1", "random": "0.01", "rgb1": "0.8 0.6 0.4",
                                     "rgb2": "0.8 0.6 0.4", "width": "127", "height": "1278"})
    ET.SubElement(asset, "texture", {"name": "texplane", "type": "2d", "builtin": "checker", "rgb1": "0.1 0.5 0.1",
                                     "rgb2": "0.1 0.4 0.1", "width": "100", "height": "100"})
    ET.SubElement(asset, "material", {"name": "MatPlane", "texture": "texplane", "texrepeat": "60 60"})
    ET.SubElement(asset, "material", {"name": "geom", "texture": "texgeom", "texuniform": "true"})
    world = ET.SubElement(mujoco_el, "worldbody")
    ET.SubElement(world, "light", {"directional": "true", "pos": "0 0 1.3", "dir": "0 0 -1.3", "diffuse": "1 1 1",
                                   "specular": ".1 .1 .1"})
    ET.SubElement(world, "geom", {"name": "floor", "type": "plane", "size": "20 20 0.125", "contype": "1",
                                  "conaffinity": "1", "condim": "3", "friction": "1 .1 .1", "material": "MatPlane"})
    lines_alpha = "0" if spec["field"] == "platform" else "1"
    for line, x in (("rightgoal", 4), ("leftgoal", -4)):
        ET.SubElement(world, "geom", {"name": line, "type": "cylinder", "fromto": f"{x} -5 0 {x} 5 0",
                                      "size": ".03", "rgba": f"0.6 0 0 {lines_alpha}"})
    if spec["field"] == "platform":
        low, high = spec["radii"]
        count = int(round((high - low) / PLATFORM_STEP)) + 1
        for i in range(count):
            radius = low + i * PLATFORM_STEP
            body = ET.SubElement(world, "body", {"name": f"platform_{i}", "mocap": "true",
                                                 "pos": fmt([PLATFORM_PARK_SPACING * (i + 1), 0, PLATFORM_PARK_Z])})
            ET.SubElement(body, "geom", {"name": f"arena_{i}", "type": "cylinder",
                                         "size": f"{radius:.4f} {PLATFORM_HALF_HEIGHT}",
                                         "contype": "1", "conaffinity": "1", "condim": "3", "friction": "1 .1 .1",
                                         "rgba": "0.3 0.3 0.5 1"})
    if spec["field"] == "football":
        ET.SubElement(world, "geom", {"name": "goalpost", "type": "box", "pos": "4.05 0 0", "size": "0.1 3 3",
                                      "contype": "0", "conaffinity": "0", "rgba": "0.6 0 0 0.15"})
        ball = ET.SubElement(world, "body", {"name": "ball", "pos": "0 0 0.2"})
        ET.SubElement(ball, "joint", {"name": "ball", "type": "free", "armature": "0", "damping": "0.001",
                                      "limited": "false", "stiffness": "0"})
        ET.SubElement(ball, "geom", {"name": "ball", "type": "sphere", "size": "0.15", "mass": "0.1",
                                     "contype": "1", "conaffinity": "1", "condim": "3"})
    actuator = ET.SubElement(mujoco_el, "actuator")
    tendon = ET.Element("tendon")
    for k, (prefix, pos, yaw) in enumerate(spec["agents"]):
        body, motors, tendons = agent_copy(robot, inertials, prefix, pos, yaw, AGENT_RGBA[k], f"agent{k}")
        world.append(body)
        actuator.extend(motors)
        tendon.extend(tendons)
    if len(tendon):
        mujoco_el.append(tendon)
    ET.indent(mujoco_el, space="  ")
    return ET.ElementTree(mujoco_el)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, spec in SCENES.items():
        tree = scene(name, spec)
        header = (f"<!-- joltgym_marl :: gym-compete form, {name} scene. Written by "
                  f"tools/make_gym_compete_scenes.py: do not edit by hand. -->\n")
        (args.out / f"{name}.xml").write_text(header + ET.tostring(tree.getroot(), encoding="unicode") + "\n")
        print(f"wrote {args.out / (name + '.xml')}")


if __name__ == "__main__":
    main()
