"""Shared helpers of the benchmark scripts in ``validation/`` (not part of the package).

Every benchmark follows the same rules:

* both sides run **in one process**, **after JIT warm-up** (each fast solver is run once on
  a small instance first; that compile/warm-up time is printed separately);
* timed runs are **interleaved** (A, B, A, B, ...) and the **best of** ``--repeat`` runs is
  kept, since the machine may be shared;
* the **objective gap** between the two sides is printed next to the times, computed in
  SPEC's canonical scaling by the :mod:`refmodels` problem (``primal_value``);
* speed is never asserted: the target is printed next to the measured ratio.

``--quick`` runs small sizes (seconds); without it, the full sizes of the target.

Each script keeps ONE current record, ``validation/results/bench/<script name>.md``
(:func:`write_current`), overwritten by every run without ``--no-record``: the command line,
the date, the machine (cores, load average) and the table. Earlier records are in git's
history, not appended.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: one current record per benchmark script (``<script name>.md``), overwritten by each run
BENCH = HERE / "results" / "bench"
PLOTS = HERE / "plots"


# ---------------------------------------------------------------------------------------
# command line and machine
# ---------------------------------------------------------------------------------------
def parser(description, **options):
    """The common options (``--quick``, ``--repeat``, ``--no-record``) and the script's own:
    ``name=default`` or ``name=(default, help)``, typed as the default (``n_test`` gives
    ``--n-test``)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per side (best kept)")
    p.add_argument("--no-record", action="store_true",
                   help="do not write the table to validation/results/bench/<script>.md")
    for name, spec in options.items():
        default, help_ = spec if isinstance(spec, tuple) else (spec, None)
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default,
                       help=help_)
    return p


def machine():
    """One line on the machine: cores, CPU, library versions."""
    import numba
    import scipy
    import sklearn

    try:
        ncores = len(os.sched_getaffinity(0))
    except AttributeError:                        # pragma: no cover (not Linux)
        ncores = os.cpu_count()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:                               # pragma: no cover
        pass
    blas = ", ".join(f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                      "MKL_NUM_THREADS") if k in os.environ)
    return (f"{ncores} cores available ({os.cpu_count()} logical), {cpu}; "
            f"BLAS threads: {blas or 'library default'}; Python "
            f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"numba {numba.__version__}, scikit-learn {sklearn.__version__}")


def load_average():
    """The machine's load average over 1, 5 and 15 minutes, as text (``"n/a"`` where the
    platform has none)."""
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except (AttributeError, OSError):             # pragma: no cover (not Unix)
        return "n/a"


def script_name():
    """The running benchmark script's name without ``.py`` (its record's file name)."""
    return Path(sys.argv[0]).stem or "interactive"


def command_line():
    env = " ".join(f"{k}={os.environ[k]}" for k in ("LIBODM_DIR", "OPENBLAS_NUM_THREADS",
                                                   "OMP_NUM_THREADS") if k in os.environ)
    cmd = "python " + " ".join([os.path.relpath(sys.argv[0], HERE.parent)] + sys.argv[1:])
    return f"{env} {cmd}" if env else cmd


# ---------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------
def timed(fn):
    """``(seconds, result)`` of one call (wall clock)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out


def warmup(fn):
    """Compile / warm-up time of a first call on a small instance (seconds)."""
    t, _ = timed(fn)
    return t


def interleaved(sides, repeat):
    """Run the callables of ``sides`` (name -> fn) in turn, ``repeat`` rounds (A, B, A, B, ...).

    Returns ``{name: (best seconds, all seconds, result of the best run)}``.
    """
    out = {name: [np.inf, [], None] for name in sides}
    for _ in range(max(1, int(repeat))):
        for name, fn in sides.items():
            t, res = timed(fn)
            rec = out[name]
            rec[1].append(t)
            if t < rec[0]:
                rec[0], rec[2] = t, res
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def rel_gap(ours, peer):
    """Signed relative objective gap ``(ours - peer) / |peer|`` (negative: ours is lower)."""
    ours, peer = float(ours), float(peer)
    return (ours - peer) / max(abs(peer), 1e-300)


# ---------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------
def fmt(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def table(headers, rows):
    """A plain-text table (also valid inside a markdown code block)."""
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join([line, sep] + body)


class Report:
    """Collects what a script prints, then writes it as the script's one current record
    (:func:`write_current`; ``name`` another record's name, for a script that keeps one per
    kind of data)."""

    def __init__(self, title, args, name=None):
        self.title = title
        self.args = args
        self.name = name
        self.machine = machine()
        self.load_start = load_average()
        self.parts = []
        print(f"# {title}", flush=True)
        print(f"machine: {self.machine}", flush=True)
        print(f"load average (1, 5, 15 min) at the start: {self.load_start}", flush=True)
        self.say("timings: best of {} interleaved runs per side (machine shared with other "
                 "jobs: times are noisy)".format(args.repeat))

    def say(self, text=""):
        print(text, flush=True)
        self.parts.append(text)

    def table(self, headers, rows, caption=None):
        if caption:
            self.say(caption)
        self.say(table(headers, rows))
        self.say()

    def record(self):
        if not self.args.no_record:
            write_current(self.title, self.args.quick, self.parts,
                          machine_line=self.machine, load_start=self.load_start,
                          name=self.name)


def write_current(title, quick, lines, machine_line=None, load_start=None, name=None):
    """Write the script's one current record, ``BENCH / f"{name}.md"`` (``name``: the running
    script's, :func:`script_name`), replacing the previous one: the title, the command line,
    the date and mode, the machine (cores, CPU, libraries) and the load average at the start
    (if given) and at the end of the run, then ``lines`` (the table) in a code block. Returns
    the path written."""
    name = name or script_name()
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    load = (f"{load_start} at the start, " if load_start else "") \
        + f"{load_average()} at the end"
    text = [f"# {title}", "",
            f"- command: `{command_line()}`",
            f"- date: {stamp} ({'quick' if quick else 'full'} run)",
            f"- machine: {machine_line or machine()}",
            f"- load average (1, 5, 15 min): {load}", "",
            "```", *lines, "```", ""]
    BENCH.mkdir(parents=True, exist_ok=True)
    path = BENCH / f"{name}.md"
    path.write_text("\n".join(text))
    try:
        shown = os.path.relpath(path, Path.cwd())
    except ValueError:                            # pragma: no cover (another drive)
        shown = str(path)
    print(f"(written to {shown})")
    return path


def verdict(ratio, target, higher_is_better=False):
    """``"met"`` / ``"not met"`` for a measured ratio against its target (printed, never asserted)."""
    if ratio is None or not np.isfinite(ratio):
        return "n/a"
    ok = ratio >= target if higher_is_better else ratio <= target
    return "met" if ok else "not met"


def savefig(fig, name):
    PLOTS.mkdir(parents=True, exist_ok=True)
    path = PLOTS / name
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def matplotlib_pyplot():
    """``matplotlib.pyplot`` with the Agg backend, or None (with a message) if absent."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return None
    return plt


def scaling_plot(R, curves, ref, xlabel, ylabel, title, name):
    """Log-log plot of ``curves`` (label -> [(size, seconds), ...]) with a line through
    ``curves[ref]``'s first point that grows linearly in the size; saved in ``plots/``."""
    plt = matplotlib_pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, pts in curves.items():
        sizes, secs = zip(*pts)
        ax.loglog(sizes, secs, "o-", label=label)
    sizes = np.array([s for s, _ in curves[ref]], float)
    ax.loglog(sizes, curves[ref][0][1] * sizes / sizes[0], "k:",
              label=f"linear in {xlabel.split()[0]}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    path = savefig(fig, name)
    R.say(f"plot: validation/plots/{path.name}")


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------
def binary_data(m, d, seed=0, flip=0.05, informative=None):
    """A standardised, reproducible binary problem (labels +-1), dense float64."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=m, n_features=d,
                               n_informative=informative or max(2, min(d, 10)),
                               n_redundant=0, flip_y=flip, class_sep=1.0, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return np.ascontiguousarray(X), np.where(y > 0, 1.0, -1.0)


# ---------------------------------------------------------------------------------------
# fast solver against the reference CVXPY solve of the same problem
# ---------------------------------------------------------------------------------------
def canonical_objective(prob, sol):
    """SPEC's canonical primal objective of ``sol``, recomputed by the problem itself
    (``primal_value`` at the solution's point), independent of what the solver reported."""
    mu = sol.variables.get("mu")
    if mu is not None and hasattr(prob, "kernel_quadratics"):        # MKLm
        return float(prob.primal_value(mu, sol.coef, sol.intercept))
    w, b = prob._primal_point(sol)
    return float(prob.primal_value(w, b))


def fast_vs_cvxpy(R, args, title, make_prob, make_small, target, gap_target, forms=("dual",),
                  fast_kwargs=None, cvxpy_kwargs=None):
    """Time ``fast.solve`` against ``prob.solve(form=...)`` (fresh problem objects for every
    run, so each side builds its own Gram / feature map), after warm-up; print the table."""
    import fast

    fast_kwargs = dict(fast_kwargs or {})
    cvxpy_kwargs = dict(cvxpy_kwargs or {})
    comp = warmup(lambda: fast.solve(make_small(), **fast_kwargs))
    R.say(f"compile / warm-up of the fast solver on a small instance: {comp:.2f} s")
    sides = {"fast": lambda: fast.solve(make_prob(), **fast_kwargs)}
    for form in forms:
        sides[f"CVXPY {form}"] = (lambda f=form: make_prob().solve(form=f, **cvxpy_kwargs))
    res = interleaved(sides, args.repeat)
    prob = make_prob()
    objs = {k: canonical_objective(prob, v[2]) for k, v in res.items()}
    best_ref = min((k for k in res if k != "fast"), key=lambda k: res[k][0])
    rows = []
    for name, (t, ts, sol) in res.items():
        rows.append([name, t, " ".join(f"{x:.3f}" for x in ts), sol.status, sol.n_iter,
                     objs[name], rel_gap(objs[name], objs[best_ref]), t / res["fast"][0]])
    R.table(["solver", "best s", "runs s", "status", "iter", "primal objective",
             f"rel gap to {best_ref}", "time / fast"], rows)
    speedup = res[best_ref][0] / res["fast"][0]
    gap = abs(rel_gap(objs["fast"], objs[best_ref]))
    R.say(f"{title}: speed-up {best_ref} / fast = {speedup:.1f}x (target >= {target}x: "
          f"{verdict(speedup, target, higher_is_better=True)}); |relative objective gap| = "
          f"{gap:.2e} (target <= {gap_target:g}: {verdict(gap, gap_target)})")
    return res, objs


def fast_vs_cvxpy_main(doc, title, name, build, options, sizes, small, kernels, target,
                       gap_target, forms=("dual",), requires=None, after=None):
    """The whole of a script timing ``fast.solve`` against the reference CVXPY solve:
    ``options`` are the model's parameters (command-line options, see :func:`parser`),
    ``sizes = ((m, d) quick, (m, d) full)``, ``small`` the warm-up size, ``kernels(d) ->
    (kernel(s), description)``, ``build(X, y, kernel(s), args)`` the ``refmodels`` problem;
    ``requires`` a module whose import failure skips the comparison (with a message) and
    makes a failed comparison a printed message; ``after(R, res)`` prints more. ``name``
    heads the verdict line."""
    args = parser(doc.splitlines()[0], **options).parse_args()
    m, d = sizes[0] if args.quick else sizes[1]
    R = Report(title, args)
    if requires:
        try:
            __import__(requires)
        except Exception as exc:                    # the solver is missing or broken
            R.say(f"{requires.replace('.', '/')}.py is not importable "
                  f"({type(exc).__name__}: {exc}): skipped")
            R.record()
            return
    X, y = binary_data(m, d, seed=0)
    Xs, ys = binary_data(small, d, seed=1)
    kern, described = kernels(d)
    R.say(f"data: make_classification {m} x {d}{described}"
          + ", ".join(f"{k} = {getattr(args, k)}" for k in options))
    try:
        res, _ = fast_vs_cvxpy(R, args, name,
                               lambda: build(X, y, kern, args),
                               lambda: build(Xs, ys, kern, args), target, gap_target,
                               forms=forms)
        if after is not None:
            after(R, res)
    except Exception as exc:
        if not requires:
            raise
        R.say(f"the comparison failed ({type(exc).__name__}: {exc}): skipped")
    R.record()
