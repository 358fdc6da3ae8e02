"""The documentation site: it builds with warnings as errors (the family pages run the
walk-throughs and draw their figures, the gallery runs its examples with matplotlib), its
math is rendered offline by the MathJax shipped with sphinx-mathjax-offline, the family
pages committed as Markdown are up to date, and every page opened in headless Chromium
shows its formulas typeset without a MathJax error or raw TeX, and its pictures loaded."""
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NEEDED = ("sphinx", "sphinx_gallery", "numpydoc", "sphinx-mathjax-offline", "matplotlib")
FAMILY_PAGES = ("svm", "svmb", "odml", "ldm", "odm", "mcodm", "svmm", "mklm", "drr")
EXAMPLES = ("ex_follow_a_derivation", "ex_verify_your_solver", "ex_write_a_regularizer",
            "ex_margin_distributions", "ex_regularization_path", "ex_drr_coefficients")


def _missing():
    return [m for m in NEEDED if importlib.util.find_spec(m) is None]


def _derive_pages():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module("derive_pages")
    finally:
        sys.path.pop(0)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(f"documentation packages not installed ({', '.join(missing)}): "
                    "pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    assert proc.returncode == 0, \
        f"sphinx build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return out / "html"


def _pages(site):
    """Every content page of the site (not the search and index pages)."""
    skip = {"search.html", "genindex.html", "py-modindex.html"}
    return sorted(p for p in site.rglob("*.html")
                  if p.name not in skip and "_modules" not in p.parts
                  and "__check__" not in p.name and "_static" not in p.parts
                  and "sg_execution_times" not in p.name)


def test_site_builds_with_all_pages(site):
    for page in ("index", "conventions", "certificates", "errata", "references", "api",
                 "exercises", "exercise-solutions", "auto_examples/index"):
        assert (site / f"{page}.html").is_file(), page
    for ex in EXAMPLES:
        assert (site / "auto_examples" / f"{ex}.html").is_file(), ex
    for fam in FAMILY_PAGES:
        html = (site / "families" / f"{fam}.html").read_text()
        assert "fails, as it should" in html or fam in ("svm", "svmb", "drr"), fam
        assert "FAIL<" not in html and "UNEXPECTED PASS" not in html
        assert "Complementary slackness" in html and "SymPy" in html or fam == "mcodm", fam
        imgs = re.findall(r'<img[^>]+src="([^"]+)"', html)
        assert imgs, f"{fam}: no figure"
        for src in imgs:
            assert (site / "families" / src).resolve().is_file(), (fam, src)
    # the gallery ran, with its figures
    ex = (site / "auto_examples" / "ex_verify_your_solver.html").read_text()
    assert "KKT certificate for SVM: HOLDS" in ex
    for ex in ("ex_margin_distributions", "ex_regularization_path", "ex_drr_coefficients"):
        html = (site / "auto_examples" / f"{ex}.html").read_text()
        assert re.search(r'<img[^>]+sphx_glr_' + ex, html), ex
    # the API reference came from the docstrings
    api = (site / "api.html").read_text()
    assert "refmodels.odm.ODM" in api and "seed 002" in api


_SCRIPT_OUT = re.compile(r'<div class="sphx-glr-script-out.*?</pre>', re.S)


def test_no_page_cites_the_internal_spec(site):
    """The pages say what they mean (the family pages, the conventions page) instead of
    citing the project's internal statement "SPEC §n" (the gallery's printed output is
    the library's runtime text: see the next test)."""
    for page in _pages(site):
        text = re.sub(r"<[^>]+>", " ", _SCRIPT_OUT.sub(" ", page.read_text()))
        assert "SPEC" not in text, page.relative_to(site)


def test_gallery_output_cites_no_internal_spec(site):
    """The gallery's printed output (the library's runtime text, certificates' notes
    included) names relations instead of citing "SPEC §n" either."""
    for page in (site / "auto_examples").glob("ex_*.html"):
        text = " ".join(_SCRIPT_OUT.findall(page.read_text()))
        assert "SPEC" not in text, page.name


def test_api_parameters_are_parameters(site):
    """numpydoc shows every entry of a Parameters section in bold: each must be a name (a
    paragraph of prose after the list belongs to Notes)."""
    api = (site / "api.html").read_text()
    names = re.findall(r"<dt><strong>(.*?)</strong>", api)
    assert len(names) > 50
    bad = [n for n in names if not re.fullmatch(r"\*{0,2}[A-Za-z_]\w*(, \*{0,2}[A-Za-z_]\w*)*",
                                                n)]
    assert not bad, bad


def test_errata_page_separates_errors_from_conventions(site):
    from refmodels.derive import ERRATA, NOTES

    html = (site / "errata.html").read_text()
    assert "Wrong in the paper" in html and "Conventions the papers state" in html
    wrong, conv = html.split("Conventions the papers state", 1)
    assert wrong.count("(&gt; 1e-") == len(ERRATA)          # each with its failing residual
    assert conv.count("a convention the paper states") == sum(
        1 for _, kind in NOTES.values() if kind == "convention")
    assert "drops the constant" not in wrong


def test_math_is_offline(site):
    html = (site / "families" / "odm.html").read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert any(s.endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))], scripts
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert (site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    assert html.count('class="math') >= 10


def test_markdown_family_pages_are_up_to_date():
    """``docs/families/*.md`` (readable on a code host, without a build) are what the
    walk-throughs write now. Numbers are compared as placeholders: residuals at round-off
    level and iteration counts may differ in the last digits between machines."""
    pytest.importorskip("sympy")
    dp = _derive_pages()

    def norm(t):
        # (a residual below the page's floor prints as "< 1e-16": round-off decides which)
        return re.sub(r"<\s*#", "#", re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", t))
    stale = []
    for fam in dp.PAGES:
        path = DOCS / "families" / f"{fam.lower()}.md"
        assert path.is_file(), f"{path} missing: python docs/_ext/derive_pages.py --markdown " \
                               "docs/families"
        _, now = dp.markdown_text(fam)
        if norm(path.read_text(encoding="utf-8")) != norm(now):
            old_lines = norm(path.read_text(encoding="utf-8")).splitlines()
            first = next((f"{a!r} -> {b!r}" for a, b in zip(old_lines, norm(now).splitlines())
                          if a != b), "(length differs)")
            stale.append(f"{fam}: {first[:300]}")
        for img in re.findall(r"\]\((img/[^)]+)\)", now):
            assert (DOCS / "families" / img).is_file(), img
    assert not stale, (f"stale Markdown pages {stale}: run python docs/_ext/derive_pages.py "
                       "--markdown docs/families")


# ----------------------------------------------------------------------------- the browser

_CHECKER = """
<script>
window.addEventListener('load', function () {
  function report() {
    var imgs = Array.prototype.slice.call(document.images);
    var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                     .map(function (i) { return i.getAttribute('src'); });
    var body = document.body.cloneNode(true);
    body.querySelectorAll('script, mjx-container, pre, code, .highlight, textarea')
        .forEach(function (e) { e.remove(); });
    var text = body.textContent;
    var delims = text.match(/\\\\\\(|\\\\\\)|\\\\\\[|\\\\\\]|\\$\\$/g) || [];
    var commands = text.match(/\\\\begin\\{|\\\\frac|\\\\tfrac|\\\\math/g) || [];
    var raw = delims.concat(commands);
    document.body.setAttribute('data-check', JSON.stringify({
      images: imgs.length, broken: broken,
      merror: document.querySelectorAll('mjx-merror').length,
      containers: document.querySelectorAll('mjx-container').length,
      raw: raw.slice(0, 5)}));
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(report, report);
  } else { report(); }
});
</script>
"""

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run",
          "--virtual-time-budget=30000"]


def _chromium(args, profile):
    return subprocess.run([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, timeout=240)


def _check_page(page, profile):
    probe = page.with_name(page.stem + ".__check__.html")
    html = page.read_text()
    probe.write_text(html.replace("</body>", _CHECKER + "</body>"))
    try:
        dom = _chromium(["--dump-dom", probe.as_uri()], profile).stdout.decode("utf-8",
                                                                                "replace")
    finally:
        probe.unlink()
    m = re.search(r"data-check=\"([^\"]*)\"", dom)
    if not m:
        return page, None, html
    data = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return page, data, html


def test_every_page_in_headless_chromium(site, tmp_path):
    """Every page: the formulas typeset (as many MathJax containers as math elements), no
    MathJax error, no raw TeX left in the text, every picture loaded."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium): the rendering check "
                    "in a browser is skipped; the build and offline checks above still ran")
    pages = _pages(site)
    assert len(pages) >= 20
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda ip: _check_page(ip[1], tmp_path / f"prof{ip[0]}"),
                                enumerate(pages)))
    problems = []
    n_img = 0
    for page, data, html in results:
        name = str(page.relative_to(site))
        if data is None:
            problems.append(f"{name}: the page's check did not report")
            continue
        n_math = html.count('class="math')
        if data["containers"] < n_math:
            problems.append(f"{name}: {data['containers']} typeset of {n_math} formulas")
        if data["merror"]:
            problems.append(f"{name}: {data['merror']} MathJax errors")
        if data["raw"]:
            problems.append(f"{name}: raw TeX in the text {data['raw']}")
        if data["broken"]:
            problems.append(f"{name}: pictures not loaded {data['broken']}")
        n_img += data["images"]
        if "families/" in name:
            assert data["images"] >= 1, f"{name}: no picture"
    assert not problems, "\n".join(problems)
    assert n_img >= 20


def test_screenshots_are_pages_not_blank(site, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    Image = pytest.importorskip("PIL.Image")
    for page in ("families/odm.html", "families/svmb.html", "errata.html"):
        shot = tmp_path / (page.replace("/", "_") + ".png")
        _chromium(["--window-size=1200,1600", f"--screenshot={shot}", (site / page).as_uri()],
                  tmp_path / "profile")
        assert shot.is_file() and shot.stat().st_size > 10_000, page
        img = Image.open(shot).convert("L")
        hist = img.histogram()
        dark = sum(hist[:128]) / sum(hist)
        assert 0.005 < dark < 0.5, (page, dark)              # text on a page: not blank
        keep = os.environ.get("REFMODELS_DOCS_SCREENSHOT")
        if keep:
            shutil.copy(shot, Path(keep).with_name(Path(keep).stem + "-" + shot.name))
