"""The documentation site: Sphinx builds docs/ with warnings as errors, every
registered task gets a page generated from the registry, no internal link of
the built site is broken, and pages render in a real headless browser
(Debian's ``chromium``).

The code blocks of the pages run in tests/test_readme.py.
"""

from __future__ import annotations

import html
import html.parser
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import numpy as np
import pytest

import joltgym_marl
from joltgym_marl.registry import TASKS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def load_task_pages():
    spec = importlib.util.spec_from_file_location("task_pages", DOCS / "_ext" / "task_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


task_pages = load_task_pages()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as the docs say (warnings are errors)."""
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(DOCS), str(out), "-d", str(out / ".doctrees")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    print(f"sphinx-build took {time.monotonic() - started:.1f} s")
    return out


# --- the generated task pages ---------------------------------------------------------------------

PAGES = task_pages.pages()


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in TASKS.values()])
def test_every_task_has_a_page_with_its_arguments_and_spaces(spec):
    page = PAGES[f"tasks/{spec.name}.md"]
    assert page.startswith(f"# {spec.title} (`{spec.env_id}`)")
    for param in spec.params:
        assert f"| `{param.name}` | {task_pages._default(param.default)} |" in page, param
    if spec.is_game:
        env = getattr(joltgym_marl, spec.module_name).parallel_env()
        agent = env.possible_agents[0]
        obs_shape, act_shape = env.observation_space(agent).shape, env.action_space(agent).shape
        env.close()
    else:
        env = getattr(joltgym_marl.envs, spec.env_class)()
        obs_shape, act_shape = env.observation_space.shape, env.action_space.shape
        env.close()
    assert f"shape `{obs_shape}`" in page and f"shape `{act_shape}`" in page
    # Each of the task's GIFs is shown, or a frame of it rendered when the site is built (the
    # single-agent pages had no picture at all).
    gifs = task_pages.gifs(spec.name)
    for gif in gifs:
        assert f"](../media/{gif.name})" in page
    assert bool(gifs) != (f"]({spec.name}.png)" in page)
    assert f"[{spec.title}]({spec.name}.md)" in PAGES["tasks/index.md"]


def test_every_gif_in_docs_media_is_on_a_task_page():
    shown = {gif.name for spec in TASKS.values() for gif in task_pages.gifs(spec.name)}
    assert shown == {p.name for p in (DOCS / "media").glob("*.gif")}


CHOICES = [(spec, p) for spec in TASKS.values() for p in spec.params if task_pages.choices(vars(p))]


@pytest.mark.parametrize("spec, param", [pytest.param(s, p, id=f"{s.name}-{p.name}") for s, p in CHOICES])
def test_the_choices_a_page_lists_are_what_the_core_accepts(spec, param):
    """The pages list a string argument's values from its doc; the core must agree."""
    make = (getattr(joltgym_marl, spec.module_name).parallel_env if spec.is_game
            else getattr(joltgym_marl.envs, spec.env_class))
    for value in task_pages.choices(vars(param)):
        make(**{param.name: value}).close()
    with pytest.raises(ValueError, match=param.name):
        make(**{param.name: "not_" + param.default})


def test_docstring_tables_become_markdown_tables():
    doc = TASKS["hopper"].doc
    markdown = task_pages.rst_to_markdown(doc)
    assert "====" not in markdown and "``" not in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| Reset noise |")]
    assert rows == ["| Reset noise | qpos + U(-s, s), qvel + U(-s, s), s = reset\\_noise\\_scale (0.005) |"]
    assert task_pages.inline("a |x| and ``b|c`` <role>", in_table=True) == r"a \|x\| and `b\|c` \<role\>"


def test_pages_are_rewritten_only_when_they_change(tmp_path):
    first = task_pages.write_pages(tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in first}
    (tmp_path / "tasks" / "no_such_task.md").write_text("# gone\n")
    time.sleep(0.01)
    second = task_pages.write_pages(tmp_path)
    assert second == first and {p: p.stat().st_mtime_ns for p in second} == stamps
    assert not (tmp_path / "tasks" / "no_such_task.md").exists()


# --- the built site -----------------------------------------------------------------------------------

class Links(html.parser.HTMLParser):
    """The ids, link targets and image sources of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.images: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag in ("a", "link") and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag in ("img", "script") and attrs.get("src"):
            (self.images if tag == "img" else self.hrefs).append(attrs["src"])
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False if tag == "title" else self._in_title

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def parse(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


@pytest.mark.slow
def test_site_has_the_pages(site):
    for page in ["index.html", "api.html", "DESIGN.html", "tasks/index.html", "guides/pettingzoo.html",
                 "guides/performance.html", *(f"tasks/{name}.html" for name in TASKS)]:
        assert (site / page).is_file(), page
    # The API reference documents the pool's methods from their docstrings.
    api = (site / "api.html").read_text()
    for name in ["joltgym_marl.WorldPool.step_all", "joltgym_marl.vector.make_sb3_vec_env",
                 "joltgym_marl.registry.TaskSpec"]:
        assert f'id="{name}"' in api, name


@pytest.mark.slow
def test_no_internal_link_is_broken(site):
    broken, checked = [], 0
    parsed: dict[Path, Links] = {}

    def links_of(page: Path) -> Links:
        if page not in parsed:
            parsed[page] = parse(page)
        return parsed[page]

    for page in sorted(site.rglob("*.html")):
        for target in links_of(page).hrefs + links_of(page).images:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or target.startswith("//"):
                continue  # external
            where = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if where.is_dir():
                where = where / "index.html"
            checked += 1
            if not where.exists():
                broken.append(f"{page.relative_to(site)}: {target} (no {where})")
            elif parts.fragment and where.suffix == ".html" and unquote(parts.fragment) not in links_of(where).ids:
                broken.append(f"{page.relative_to(site)}: {target} (no id {parts.fragment!r})")
    assert checked > 500, checked
    assert not broken, "\n".join(broken)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("headless Chromium is missing: install Debian's chromium "
                    "(set-up command 2, tools/setup_tests.sh, installs it where missing)")
    return found


def run_chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={profile}", "--window-size=1280,1000", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.slow
@pytest.mark.parametrize("page, title, gif", [
    ("index.html", "joltgym_marl", "cheetah_race.gif"),
    ("tasks/sumo.html", "Sumo (sumo_v0)", "sumo_humanoids.gif"),
])
def test_page_renders_in_headless_chromium(site, tmp_path, page, title, gif):
    url = (site / page).as_uri()
    shot = tmp_path / "shot.png"
    proc = run_chromium(tmp_path / "profile", f"--screenshot={shot}", url)
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-3000:]
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.float64)
    assert pixels.shape == (1000, 1280, 3)
    # Not blank: a rendered page has text, a sidebar and pictures; an empty or
    # failed one is (nearly) one colour.
    assert pixels.std() > 20, pixels.std()
    assert len(np.unique(pixels.reshape(-1, 3)[::7], axis=0)) > 200

    dom = run_chromium(tmp_path / "profile", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-3000:]
    links = Links()
    links.feed(dom.stdout)
    assert links.title.startswith(title), links.title
    images = [src for src in links.images if src.endswith(".gif")]
    assert any(src.endswith("/" + gif) for src in images), images
    for src in images:
        assert (site / page).parent.joinpath(unquote(src)).resolve().is_file(), src


@pytest.mark.slow
def test_every_task_page_shows_a_picture_of_the_task(site):
    from PIL import Image

    for spec in TASKS.values():
        page = site / "tasks" / f"{spec.name}.html"
        images = [src for src in parse(page).images if src.endswith((".gif", ".png"))]
        assert images, f"{page.name} shows no picture"
        for src in images:
            with Image.open(page.parent / unquote(src)) as image:
                pixels = np.asarray(image.convert("RGB"))
            colours = len(np.unique(pixels.reshape(-1, 3), axis=0))
            assert colours > 50, f"{src}: a blank picture ({colours} colours)"  # a shaded robot, not one colour


@pytest.mark.slow
def test_site_footer_and_diagrams(site):
    index = (site / "index.html").read_text()
    # Furo printed "Copyright ©" with nothing after it when conf.py had no copyright.
    footer = re.search(r"Copyright &#169;([^<]*)<", index)
    assert footer and "the joltgym_marl authors" in footer.group(1), footer
    # A block without a language is a diagram or output: the repository map of DESIGN.md was
    # highlighted as Python (keywords and operators coloured in a tree of file names).
    design = (site / "DESIGN.html").read_text()
    assert "highlight-default" not in design and "highlight-python" not in design
    assert 'class="highlight-text' in design


# Loads each page in a frame as wide as the window and reports every code block or table that
# does not fit the article's column (its content wider than its box, or its box past the column's
# right edge with no scrolling box around it).
MEASURE = """<html><body><iframe id="f"></iframe><pre id="out">pending</pre><script>
const pages = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const f = document.getElementById('f'), found = [];
let k = 0;
function next() {
  if (k >= pages.length) { document.getElementById('out').textContent = 'done\\n' + found.join('\\n'); return; }
  const [url, width] = pages[k++];
  f.style.width = width + 'px'; f.style.height = '900px';
  f.onload = () => {
    const d = f.contentDocument, w = f.contentWindow;
    const column = (d.querySelector('article') || d.body).getBoundingClientRect().right;
    for (const el of d.querySelectorAll('article pre, article table')) {
      const box = el.getBoundingClientRect();
      let scrolls = false;
      for (let n = el.parentElement; n && n !== d.body; n = n.parentElement) {
        const x = w.getComputedStyle(n).overflowX;
        if (x === 'auto' || x === 'scroll') { scrolls = true; break; }
      }
      const text = (el.textContent || '').trim().slice(0, 60).replace(/\\s+/g, ' ');
      if (el.scrollWidth > el.clientWidth + 1)
        found.push(`${url} @${width}px: ${el.tagName} content ${el.scrollWidth}px in a ${el.clientWidth}px box: ${text}`);
      else if (box.right > column + 6 && !scrolls)
        found.push(`${url} @${width}px: ${el.tagName} ends at ${Math.round(box.right)}px, past the column at ${Math.round(column)}px: ${text}`);
    }
    next();
  };
  f.src = url;
}
next();
</script></body></html>"""


@pytest.mark.slow
def test_code_blocks_and_tables_fit_the_page_in_chromium(site, tmp_path):
    # Long commands and wide tables ran past the right edge of the column, cut off where the
    # scrollbar was hidden (an overlay scrollbar, a screenshot, a phone).
    pages = [p for p in sorted(site.rglob("*.html")) if not p.name.startswith(("genindex", "search", "py-modindex"))
             and "_" not in p.relative_to(site).parts[0][:1]]
    assert len(pages) > 20
    harness = tmp_path / "measure.html"
    harness.write_text(MEASURE)
    wanted = [[p.as_uri(), width] for width in (1280, 700) for p in pages]
    proc = run_chromium(tmp_path / "profile", "--allow-file-access-from-files", "--virtual-time-budget=60000",
                        "--dump-dom", harness.as_uri() + "#" + quote(json.dumps(wanted)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = html.unescape(re.search(r'<pre id="out">(.*?)</pre>', proc.stdout, re.DOTALL).group(1))
    assert report.startswith("done"), report[:500]
    assert report == "done\n", report[:4000]
