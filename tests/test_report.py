"""The validation report builds and renders: ``validation/report.py --smoke`` on one
tiny reproduction writes a self-contained HTML page and its Markdown twin, and headless
Chromium (when installed, e.g. ``apt-get install chromium``) renders the page to a non-blank
screenshot. Not a reproduction check: it only proves the page works."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "validation" / "report.py"
BENCH = REPO / "validation" / "results" / "bench"


def _validation_module(name):
    """A module of ``validation/`` (not a package), imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_validation_{name}",
                                                  REPO / "validation" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _chromium():
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(name):
            return name
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def smoke_report(tmp_path_factory):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    pytest.importorskip("joblib")
    out = tmp_path_factory.mktemp("report")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(REPORT), "--smoke", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_report_is_self_contained(smoke_report):
    page = (smoke_report / "report.html").read_text()
    md = (smoke_report / "report.md").read_text()
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert "<table" in page and "data:image/png;base64," in page
    # no network: no external scripts, styles or images
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page
    assert "Seed 004" in page and "paper" in page and "Environment" in page
    assert "| numpy |" in md and "Seed 004" in md
    assert (smoke_report / "figures" / "drm_scores.png").stat().st_size > 10_000


def test_report_shows_the_current_record_of_every_benchmark(smoke_report):
    """Every ``validation/results/bench/<script>.md`` appears in the report, under its
    title; there is no appended history file to read."""
    import html

    md = (smoke_report / "report.md").read_text()
    page = (smoke_report / "report.html").read_text()
    records = sorted(BENCH.glob("*.md"))
    assert records, "no benchmark record in validation/results/bench"
    assert "## Benchmarks (validation/results/bench/" in md
    for f in records:
        title = f.read_text().splitlines()[0][2:]
        assert f"### {title}" in md and f"validation/results/bench/{f.name}" in md, f.name
        assert html.escape(title) in page, f.name
    assert not (REPO / "validation" / "RESULTS.md").exists()


def test_benchmark_record_is_one_current_file_per_script(tmp_path, monkeypatch):
    """``validation/_harness.py``: a run writes ``<script name>.md`` with the command line,
    the date, the machine (cores, load average) and the table; the next run replaces it
    (nothing appended); ``--no-record`` writes nothing."""
    H = _validation_module("_harness")
    monkeypatch.setattr(H, "BENCH", tmp_path / "bench")
    monkeypatch.setattr(sys, "argv", [str(REPO / "validation" / "bench_toy.py"), "--quick"])
    for value in (0.0123, 0.0456):
        args = H.parser("toy").parse_args(["--quick", "--repeat", "1"])
        R = H.Report("Toy benchmark", args)
        R.table(["solver", "best s"], [["fast", value]])
        R.record()
    files = list((tmp_path / "bench").iterdir())
    assert [f.name for f in files] == ["bench_toy.md"]
    text = files[0].read_text()
    assert text.startswith("# Toy benchmark\n")
    assert "- command: `python validation/bench_toy.py --quick`" in text
    assert "(quick run)" in text and "cores available" in text
    assert "- load average (1, 5, 15 min): " in text and " at the end" in text
    assert "0.0456" in text and "0.0123" not in text   # the second run replaced the first
    assert text.count("# Toy benchmark") == 1
    args = H.parser("toy").parse_args(["--no-record"])
    monkeypatch.setattr(sys, "argv", [str(REPO / "validation" / "bench_other.py")])
    H.Report("Other", args).record()
    assert [f.name for f in (tmp_path / "bench").iterdir()] == ["bench_toy.md"]


def test_report_renders_in_chromium(smoke_report, tmp_path):
    chromium = _chromium()
    if not chromium:
        pytest.skip("chromium not installed (apt-get install chromium): render check skipped")
    shot = tmp_path / "shot.png"
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
           "--window-size=1280,2000", f"--screenshot={shot}",
           (smoke_report / "report.html").as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 0, (
        f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}")
    import matplotlib.image as mpimg

    img = mpimg.imread(str(shot))[..., :3]
    assert img.shape[0] > 100 and img.shape[1] > 100
    # rendered, not blank: some dark text pixels and some variety in colour
    assert (img.mean(axis=2) < 0.5).mean() > 0.002, "screenshot is (nearly) blank"
    assert img.std() > 0.05, "screenshot has no contrast"
