"""The install that the README's commands run: every lower bound of pyproject.toml is the
version pinned in ``.ci/constraints-lowest.txt`` (the file with which CI can be run at the
oldest supported versions), and every package that a README command imports is in that
command's install."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lower_bounds():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in ("test", "docs"):
        reqs += meta["optional-dependencies"][extra]
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?\s*>=\s*([0-9][0-9A-Za-z.]*)",
                         r.strip())
        assert m, f"every requirement states a lower bound with >=: {r!r}"
        out[m.group(1).lower().replace("_", "-")] = m.group(3)
        if m.group(1) == "dask" and m.group(2) == "distributed":
            out["distributed"] = m.group(3)       # dask[distributed] pins its own release
    return out


def _pins():
    pins = {}
    for line in (ROOT / ".ci" / "constraints-lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def _norm(v):
    parts = v.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def test_lowest_constraints_pin_every_lower_bound():
    bounds, pins = _lower_bounds(), _pins()
    assert set(bounds) == set(pins), (sorted(set(bounds) ^ set(pins)))
    for name, low in bounds.items():
        assert _norm(pins[name]) == _norm(low), (name, low, pins[name])


def test_docs_build_needs_are_in_the_test_extra():
    """The test suite builds the site, so the ``test`` extra holds all of ``docs``
    (sphinx-gallery imports matplotlib whatever the scrapers)."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    name = lambda r: re.split(r"[<>=\[ ]", r, maxsplit=1)[0].lower()
    assert {name(r) for r in meta["docs"]} <= {name(r) for r in meta["test"]}
    assert "matplotlib" in {name(r) for r in meta["docs"]}


def _commands(text):
    return [line.strip() for line in text.splitlines()
            if line.strip().startswith("pip install -e ")]


def test_ci_runs_exactly_the_readme_commands():
    """``.ci/run`` is the README's set-up, command for command: a change to one that is not
    made to the other would let CI pass on commands a new user does not run."""
    readme = _commands((ROOT / "README.md").read_text())
    ci = _commands((ROOT / ".ci" / "run").read_text())
    assert len(readme) == 2 and readme == ci, (readme, ci)
