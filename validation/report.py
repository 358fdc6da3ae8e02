"""One page for a reviewer: runs the quick paper reproductions and the pictures
(``validation/reproduce/``), reads the benchmarks' current records
(``validation/results/bench/<script>.md``, ``validation/plots/``), and writes ``report.html`` (self-contained: images embedded as
base64, inline CSS, no script, no CDN, no network) and its Markdown twin ``report.md``, with
the versions of every dependency and the machine.

    python validation/report.py                 # quick reproductions + pictures (~10-20 min)
    python validation/report.py --smoke         # one tiny reproduction + one picture (seconds)
    python validation/report.py --no-run        # re-assemble from results on disk (runs.json)
    python validation/report.py --out DIR       # default validation/results
"""
from __future__ import annotations

import argparse
import base64
import datetime as _dt
import html
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
REPRO = HERE / "reproduce"
#: the benchmark scripts' current records, one file per script (``validation/_harness.py``)
BENCH = HERE / "results" / "bench"

# (results folder, script, arguments of the quick run, title)
QUICK_RUNS = [
    ("seed002_odm", "seed002_odm.py", ["--quick"], "Seed 002 Tables 2-3 (ODM, ODM^L vs SVM)"),
    ("seed001_ldm", "seed001_ldm.py", ["--quick"], "Seed 001 Tables 2-3 (LDM vs SVM)"),
    ("seed002_mcodm", "seed002_mcodm.py", ["--quick"], "Seed 002 Table 5 (mcODM)"),
    ("seed003_svmm", "seed003_svmm.py", ["--quick"], "Seed 003 Tables I-II (SVMm, MKLm)"),
    ("seed004_drm", "seed004_drm.py", ["--quick"], "Seed 004 Tables III, VIII (DRM)"),
    ("figures", "figures.py", ["--quick"], "Pictures"),
]
SMOKE_RUNS = [
    ("seed004_drm", "seed004_drm.py",
     ["--quick", "--tables", "III", "--datasets", "iris", "--repeats", "1", "--methods",
      "DRM", "--kernels", "R", "--no-warmup"],
     "Seed 004 Table III on iris (smoke)"),
    ("figures", "figures.py", ["--quick", "--only", "drm_scores", "--no-warmup"],
     "DRM decision scores (smoke)"),
]
FIGURES = [
    ("margins_svm_odml_odm.png", "Cumulative margin distribution: SVM, ODM^L, ODM"),
    ("margins_svm_ldm.png", "Cumulative margin distribution: SVM vs LDM"),
    ("time_vs_size.png", "Time against problem size (log-log, fitted slopes)"),
    ("drm_scores.png", "DRM decision scores on a 2-D example"),
    ("drm_alpha_beta.png", "DRM accuracy against alpha and beta"),
]
DEPENDENCIES = ["numpy", "scipy", "cvxpy", "clarabel", "osqp", "numba", "llvmlite",
                "scikit-learn", "joblib", "threadpoolctl", "tqdm", "matplotlib", "pillow",
                "dask", "distributed", "skglm", "pytest", "hypothesis", "refmodels"]


# ---------------------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------------------
def versions():
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in DEPENDENCIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine():
    info = {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or "?"}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        info["cores available"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    info["logical cpus"] = os.cpu_count()
    try:
        info["load average (1, 5, 15 min) when the page was written"] = ", ".join(
            f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        pass
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["memory"] = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
                break
    except OSError:
        pass
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if k in os.environ:
            info[k] = os.environ[k]
    try:
        info["git commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                            capture_output=True, text=True,
                                            timeout=10).stdout.strip() or "?"
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        info["git tree"] = "modified" if dirty else "clean"
    except (OSError, subprocess.SubprocessError):
        info["git commit"] = "?"
    return info


# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------
def run_scripts(runs, out, fresh):
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    log = []
    for folder, script, extra, title in runs:
        cmd = [sys.executable, str(REPRO / script), *extra, "--out", str(out), "--no-progress"]
        if fresh and script != "figures.py":
            cmd.append("--fresh")
        print(f"[report] {' '.join(cmd[1:])}", flush=True)
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        dt = time.perf_counter() - t
        (out / f"{folder}.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        status = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
        print(f"[report]   {status} in {dt:.0f} s", flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
        shown = [a for a in extra if a != "--no-warmup"]
        log.append({"title": title, "command": "python validation/reproduce/" + script + " "
                    + " ".join(shown), "seconds": dt, "status": status})
    return log


# ---------------------------------------------------------------------------------------
# markdown -> html (the subset our tables use)
# ---------------------------------------------------------------------------------------
def _inline(text):
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
    t = re.sub(r"(?<![\w*])_(.+?)_(?![\w*])", r"<em>\1</em>", t)
    return t


def md_to_html(md):
    out, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            rows = [[c.strip() for c in r.strip().strip("|").split("|")] for r in block
                    if not re.match(r"^\|[-|: ]+\|?$", r.strip())]
            head, body = rows[0], rows[1:]
            h = "<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head)
            h += "</tr></thead><tbody>"
            for r in body:
                cls = ' class="flag"' if any("paper std" in c or "binomial std" in c
                                             for c in r) else ""
                h += f"<tr{cls}>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>"
            out.append(h + "</tbody></table>")
            continue
        m = re.match(r"^(#{1,4}) (.*)", line)
        if m:
            n = len(m.group(1)) + 1
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif line.startswith(("* ", "- ")):
            items = []
            while i < len(lines) and lines[i].startswith(("* ", "- ")):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif line.startswith("```"):
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            out.append("<pre>" + html.escape("\n".join(block)) + "</pre>")
        elif line.strip():
            para = [line]
            while (i + 1 < len(lines) and lines[i + 1].strip()
                   and not lines[i + 1].startswith(("|", "#", "* ", "- ", "```"))):
                i += 1
                para.append(lines[i])
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
        i += 1
    return "\n".join(out)


CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1250px;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #345;padding-bottom:.2em}h2{margin-top:2em;color:#234}
h3{color:#345}table{border-collapse:collapse;margin:.6em 0;font-size:13px}
th,td{border:1px solid #ccd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef2f7}tr.flag td{background:#fff4e5}code,pre{background:#f4f4f4}
pre{padding:.6em;overflow-x:auto;font-size:12px}figure{margin:1em 0}
figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:13px;color:#555}
.small{font-size:12px;color:#555}details{margin:.6em 0}summary{cursor:pointer;color:#235}
"""


def _img_b64(path):
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode()


def bench_records(folder=BENCH):
    """``[(script name, Markdown)]``: the current record of each benchmark script, by name,
    its title demoted to a third-level heading (the report's benchmarks are a section)."""
    out = []
    for f in sorted(Path(folder).glob("*.md")):
        text = f.read_text().strip()
        if text.startswith("# "):
            text = "##" + text
        out.append((f.stem, text))
    return out


def assemble(out, run_log, smoke):
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = ["# refmodels validation report", "",
          f"Generated {now} by `python validation/report.py"
          + (" --smoke" if smoke else "") + "`. Our figures are as measured; where they "
          "differ from a paper's by more than the paper's standard deviation the row is "
          "flagged (shaded in the HTML page) with the likeliest reason. Quick mode: reduced "
          "grids and few splits, so the reproductions are indicative; the full mode of every "
          "script (see validation/README.md) runs the papers' grids.", ""]
    if run_log:
        md += ["## Runs", "", "Wall-clock seconds of each quick run (a machine shared with "
               "other jobs stretches them; see the load average under Environment).", "",
               "| part | command | time (s) | status |", "|---|---|---|---|"]
        md += [f"| {r['title']} | `{r['command']}` | {r['seconds']:.0f} | {r['status']} |"
               for r in run_log]
        md += [""]
    body_html = [md_to_html("\n".join(md))]
    md_parts = list(md)
    md_parts.append("## Paper reproductions")
    body_html.append("<h2>Paper reproductions</h2>")
    for folder, _, _, title in QUICK_RUNS[:-1]:
        f = out / folder / "table.md"
        if f.exists():
            text = f.read_text()
            md_parts += ["", text.replace("\n## ", "\n### ", 1) if not text.startswith("## ")
                         else "#" + text]
            body_html.append(md_to_html("#" + text if text.startswith("## ") else text))
    # pictures
    figs = [(n, c) for n, c in FIGURES if (out / "figures" / n).exists()]
    if figs:
        md_parts += ["", "## Pictures", ""]
        body_html.append("<h2>Pictures</h2>")
        for n, c in figs:
            md_parts += [f"![{c}](figures/{n})", "", f"*{c}*", ""]
            body_html.append(f'<figure><img alt="{html.escape(c)}" src="{_img_b64(out / "figures" / n)}">'
                             f"<figcaption>{html.escape(c)}</figcaption></figure>")
        for extra in ("margins.json", "time_vs_size.json"):
            p = out / "figures" / extra
            if p.exists():
                txt = p.read_text()
                md_parts += [f"`figures/{extra}`:", "", "```", txt, "```", ""]
                body_html.append(f"<details><summary>figures/{extra}</summary><pre>"
                                 f"{html.escape(txt)}</pre></details>")
    # benchmarks
    records = bench_records()
    if records:
        md_parts += ["", "## Benchmarks (validation/results/bench/, the current record of "
                     "each script)", ""]
        body_html.append("<h2>Benchmarks (validation/results/bench/, the current record of "
                         "each script)</h2><p class=small>Recorded by the benchmark scripts; "
                         "not re-run by this report.</p>")
        for name, text in records:
            md_parts += [text, "", f"*validation/results/bench/{name}.md*", ""]
            body_html.append(md_to_html(text)
                             + f"<p class=small>validation/results/bench/{name}.md</p>")
        for png in sorted((HERE / "plots").glob("*.png")):
            md_parts += [f"![{png.name}](../plots/{png.name})", ""]
            body_html.append(f'<figure><img alt="{png.name}" src="{_img_b64(png)}">'
                             f"<figcaption>validation/plots/{png.name}</figcaption></figure>")
    # environment
    v, m = versions(), machine()
    env_md = ["", "## Environment", "", "| dependency | version |", "|---|---|"]
    env_md += [f"| {k} | {val} |" for k, val in v.items()]
    env_md += ["", "| machine | |", "|---|---|"] + [f"| {k} | {val} |" for k, val in m.items()]
    md_parts += env_md
    body_html.append(md_to_html("\n".join(env_md)))
    (out / "report.md").write_text("\n".join(md_parts) + "\n")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>refmodels validation report</title><style>" + CSS + "</style></head><body>"
            + "\n".join(body_html) + "</body></html>\n")
    (out / "report.html").write_text(page)
    return out / "report.html", out / "report.md"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="one tiny reproduction (seconds)")
    p.add_argument("--no-run", action="store_true", help="only assemble existing results")
    p.add_argument("--fresh", action="store_true", help="rerun cells already in the CSVs")
    p.add_argument("--out", default=str(HERE / "results"))
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    import json

    runs_file = out / "runs.json"
    if args.no_run:
        log = json.loads(runs_file.read_text()) if runs_file.exists() else []
    else:
        log = run_scripts(SMOKE_RUNS if args.smoke else QUICK_RUNS, out, args.fresh)
        runs_file.write_text(json.dumps(log, indent=1))
    page, md = assemble(out, log, args.smoke)
    print(f"[report] wrote {page} ({page.stat().st_size / 1e6:.2f} MB) and {md} in "
          f"{time.perf_counter() - t:.0f} s")
    return 1 if any(r["status"] != "ok" for r in log) else 0


if __name__ == "__main__":
    sys.exit(main())
