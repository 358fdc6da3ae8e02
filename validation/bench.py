"""Every peer comparison as one ratio table, checked against a committed baseline.

    python -m validation.bench [--quick] [--update-baseline] [--only NAME ...]
                               [--repeat N] [--floor F] [--slow NAME=FACTOR]

Each comparison times our solver against a peer (LIBLINEAR, skglm, LIBSVM, KernelRidge,
CVXPY, LIBODM) **in one process, after warm-up**: the first call of each side on a small
instance (numba compiling or loading its cache, skglm's compile) is timed and reported
apart, never in the ratio. Then ``--repeat`` rounds (default 5) each run both sides, in
alternating order (a side that takes less than a quarter second is called as many times as
make a quarter second, ``timeit``'s autorange) (ours first, then the peer first, ...), and give one ratio
``time(ours) / time(peer)``: the two runs of a round are seconds apart, so a change of the
machine's load between rounds moves both. The ratio of the comparison is the **median** of
the rounds' ratios; its **noise** is the largest relative distance of a round's ratio from
that median, ``max_r |ratio_r / median - 1|``.

The baseline, ``validation/results/bench/baseline.json``, holds the ratio and noise of every
comparison for ``--quick`` and for the full sizes apart. A comparison **regresses** when

    ratio > baseline ratio x (1 + max(noise now, noise of the baseline, floor))

with the floor ``FLOOR`` (``--floor``): the run-to-run change of a quick run's ratios seen on
the project's shared 2-core machine, where one run's noise can understate it (the figures:
validation/decisions.md); a comparison whose ratio moved more than that between runs has
its own, larger floor (kernel ODM vs CVXPY: 2.0, i.e. a threefold worsening). The command exits 1 when a comparison regresses, 0
otherwise (a comparison absent from the baseline is reported as new; a peer that is not
installed or not built is skipped with a message). ``--update-baseline`` writes the ratios
just measured as the new baseline of the mode run (the other mode's entries are kept);
commit it with the change that moved them. Every run writes the one current table,
``validation/results/bench/bench.md`` (earlier tables: git's history).

``--slow NAME=FACTOR`` makes our side of comparison NAME take FACTOR times as long (it
sleeps after each call): the check's own demonstration that a slowed solver fails.

Why not airspeed velocity (asv), which numpy and scikit-learn use: asv times one
function at a time across the commits of a project, in an environment it builds per
commit, and keeps its results per machine; a regression there is a commit whose absolute
time rose. What is tracked here is a ratio to a peer measured side by side, the one
number that survives this machine's load (LIBLINEAR alone took 0.4 s to 10 s on the same
problem, by the hour), against a baseline that is committed with the code; asv's
``track_`` benchmarks can return a ratio, but get no repeats or noise, and the per-commit
environments would rebuild numba, CVXPY and Clarabel for minutes. The comparisons reuse
the scripts' own pieces (``_harness`` data and objectives, ``bench_svc``'s dual objective,
``bench_libodm``'s LIBODM driver).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:                 # the scripts import ``_harness`` by name
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import _harness as H  # noqa: E402

BASELINE = H.BENCH / "baseline.json"
RECORD_NAME = "bench"
#: the relative worsening always tolerated (module doc): a quick run's ratios moved by up
#: to this much from one run to the next with the code unchanged (validation/decisions.md)
FLOOR = 0.35
REPEAT = 5
#: a side faster than this is called several times per round (``timeit``'s autorange, as
#: asv does): one call of a few milliseconds is mostly the machine's jitter
MIN_SAMPLE = 0.25
#: the clock of the timed rounds (a test replaces it with a fake one)
clock = time.perf_counter


class Skip(Exception):
    """A comparison whose peer is missing (not installed, not built): skipped, said why."""


@dataclass
class Sides:
    """One comparison, set up: ``ours()`` and ``peer()`` are timed; ``warm_ours`` and
    ``warm_peer`` are their first calls on a small instance (compile time, reported apart);
    ``check(out_ours, out_peer)`` says how close the two answers are (text)."""
    ours: Callable
    peer: Callable
    warm_ours: Callable
    warm_peer: Callable | None = None
    check: Callable | None = None
    size: str = ""
    #: BLAS threads of both sides during the rounds (None: the library's default)
    blas_threads: int | None = None


@dataclass
class Comparison:
    name: str
    peer: str
    what: str
    setup: Callable               # setup(quick) -> Sides (or raises Skip)
    #: this comparison's own floor where its ratio moves more between runs than FLOOR
    floor: float | None = None


# ---------------------------------------------------------------------------------------
# the comparisons (sizes: quick, full; the full ones are the scripts')
# ---------------------------------------------------------------------------------------
def _linear_svm_w(out):
    return (out.variables["w"] if hasattr(out, "variables")
            else np.ravel(out.coef_)).astype(float)


def _linear_svm(peer, quick):
    import fast
    import refmodels as rm

    C, tol = 0.1, 1e-4
    m, d = (20000, 100) if (peer == "liblinear" or not quick) else (5000, 100)
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(500, 10, seed=1)

    def ours():
        return fast.solve(rm.SVM(X, y, C=C), tol=tol, random_state=0)

    if peer == "liblinear":
        from sklearn.svm import LinearSVC

        def make(Xa, ya):
            return lambda: LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C,
                                     tol=tol, max_iter=100000, random_state=0).fit(Xa, ya)
    else:
        try:
            from skglm.estimators import LinearSVC as SkglmSVC
        except ImportError as exc:
            raise Skip(f"skglm is not importable ({exc}); pip install -e '.[bench]'") from None

        def make(Xa, ya):
            return lambda: SkglmSVC(C=C, tol=tol, max_iter=10000).fit(Xa, ya)

    def check(a, b):
        prob = rm.SVM(X, y, C=C)
        gap = H.rel_gap(prob.primal_value(_linear_svm_w(a)), prob.primal_value(_linear_svm_w(b)))
        return f"objective rel gap {gap:+.1e}"

    return Sides(ours, make(X, y),
                 lambda: fast.solve(rm.SVM(Xs, ys, C=C), tol=tol, random_state=0),
                 make(Xs, ys), check, f"{m} x {d}, C = {C}, tol = {tol:g}")


def _svc(quick):
    import fast
    import refmodels as rm
    from sklearn.svm import SVC

    import bench_svc

    m, d, C, tol, cache = (1500 if quick else 6000), 10, 1.0, 1e-3, 500
    gamma = 1.0 / d
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(300, d, seed=1)
    kern = rm.kernels.RBF(gamma=gamma)

    def ours(Xa=X, ya=y):
        return fast.solve(rm.SVM(Xa, ya, C=C, kernel=kern, fit_intercept=True), tol=tol,
                          cache_size=cache)

    def peer(Xa=X, ya=y):
        return SVC(C=C, kernel="rbf", gamma=gamma, tol=tol, cache_size=cache).fit(Xa, ya)

    def check(a, b):
        nu = np.zeros(m)
        nu[b.support_] = b.dual_coef_.ravel()
        Da = bench_svc.objectives(X, y, C, gamma, a.coef, a.intercept)[0]
        Db = bench_svc.objectives(X, y, C, gamma, nu, float(b.intercept_[0]))[0]
        return f"dual objective rel gap {H.rel_gap(Da, Db):+.1e}"

    return Sides(ours, peer, lambda: ours(Xs, ys), lambda: peer(Xs, ys), check,
                 f"m = {m}, d = {d}, RBF, C = {C}, tol = {tol:g}")


def _kernel_ridge(quick):
    import fast
    import refmodels as rm
    from sklearn.datasets import make_classification
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import rbf_kernel

    n, n_test, d = (1000, 500, 20) if quick else (4000, 2000, 20)
    X, y = make_classification(n_samples=n + n_test, n_features=d, n_informative=10,
                               n_classes=3, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    Xtr, ytr, Xte = X[:n], y[:n], X[n:]
    gamma, beta = 1.0 / d, 0.1
    kern = rm.kernels.RBF(gamma=gamma)

    def ours(a=Xtr, b=ytr, c=Xte):
        return fast.solve(rm.DRM(a, b, c, alpha=0.0, beta=beta, kernel=kern))

    def peer(a=Xtr, c=Xte):
        return KernelRidge(alpha=beta, kernel="rbf", gamma=gamma).fit(
            a, rbf_kernel(a, c, gamma=gamma))

    def check(a, b):
        return f"max |coef error| {float(np.max(np.abs(np.asarray(a.coef) - b.dual_coef_))):.1e}"

    # both sides are one LAPACK solve: with the default two threads on the loaded 2-core
    # machine the ratio jumped between 0.97 and 2.3 from one run to the next (whichever
    # side's threads waited more), so both run on one thread, as the script's record did
    return Sides(ours, peer, lambda: ours(Xtr[:100], ytr[:100], Xte[:20]),
                 lambda: peer(Xtr[:100], Xte[:20]), check,
                 f"DRM alpha = 0, {n} train / {n_test} test, RBF, 1 BLAS thread",
                 blas_threads=1)


def _kernel_odm_cvxpy(quick):
    import fast
    import refmodels as rm

    m, d = (200, 10) if quick else (800, 10)
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(60, d, seed=1)
    kern = rm.kernels.RBF(gamma=1.0 / d)

    def prob(Xa=X, ya=y):
        return rm.ODM(Xa, ya, lam=10.0, mu=0.8, theta=0.2, kernel=kern)

    def check(a, b):
        p = prob()
        return (f"objective rel gap "
                f"{H.rel_gap(H.canonical_objective(p, a), H.canonical_objective(p, b)):+.1e}")

    return Sides(lambda: fast.solve(prob()), lambda: prob().solve(form="dual"),
                 lambda: fast.solve(prob(Xs, ys)), lambda: prob(Xs, ys).solve(form="dual"),
                 check, f"kernel ODM, m = {m}, RBF, CVXPY dual (Clarabel)")


def _libodm(quick):
    import fast
    import refmodels as rm

    import bench_libodm as L

    lib, where = L.load_libodm()
    if lib is None:
        raise Skip(f"LIBODM not found ({where})")
    m, d, eps = (600 if quick else 3000), 10, 1e-3
    lam, mu, theta, gamma = 10.0, 0.8, 0.2, 1.0 / d
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(200, 5, seed=1)
    kern = rm.kernels.RBF(gamma=gamma)
    data, small = L.LibodmData(X, y), L.LibodmData(Xs, ys)

    def ours(Xa=X, ya=y):
        return fast.solve(rm.ODM(Xa, ya, lam=lam, mu=mu, theta=theta, kernel=kern), tol=eps,
                          method="dcd", random_state=0)

    def peer(dat=data):
        return L.libodm_train(lib, dat, L.RBF, lam, mu, theta, gamma, eps)

    def check(a, b):
        p = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kern)
        gap = H.rel_gap(H.canonical_objective(p, a), p.solution_from(coef=b[1]).objective)
        return f"objective rel gap {gap:+.1e}"

    return Sides(ours, peer, lambda: ours(Xs, ys), lambda: peer(small), check,
                 f"ODM RBF m = {m}, eps = tol = {eps:g}, DCD")


COMPARISONS = [
    Comparison("linear_svm_liblinear", "LIBLINEAR",
               "linear SVM (hinge, no intercept), fast DCD vs LinearSVC(dual=True)",
               lambda q: _linear_svm("liblinear", q)),
    Comparison("linear_svm_skglm", "skglm", "linear SVM, fast DCD vs skglm LinearSVC",
               lambda q: _linear_svm("skglm", q)),
    Comparison("svc_libsvm", "LIBSVM", "SVM with intercept (RBF), fast SMO vs SVC", _svc),
    Comparison("drm_kernel_ridge", "KernelRidge", "DRM alpha = 0 vs KernelRidge",
               _kernel_ridge),
    # our side takes ~10 ms at the quick size and CVXPY's 1-2 s by the run (its Python
    # canonicalisation): the quick ratio ranged 0.0047-0.0133 over six runs of one code
    Comparison("kernel_odm_cvxpy", "CVXPY", "kernel ODM, fast DCD vs the reference dual",
               _kernel_odm_cvxpy, floor=2.0),
    Comparison("odm_libodm", "LIBODM", "ODM RBF, fast DCD vs LIBODM's dual CD", _libodm),
]


# ---------------------------------------------------------------------------------------
# measurement and comparison (pure: the tests run them on synthetic timings)
# ---------------------------------------------------------------------------------------
def _silently(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def measure(ours, peer, repeat, min_sample=None):
    """``repeat`` rounds of each side, the order alternating; returns the median of the
    rounds' ratios ``t_ours / t_peer``, its noise ``max |r / median - 1|``, the median times
    (per call) and the last outputs (timed by :data:`clock`). A side whose first call took
    less than ``min_sample`` seconds (default :data:`MIN_SAMPLE`; 0: no such call) is called
    ``ceil(min_sample / t)`` times per round (at most 1000), its time per call the mean."""
    timer = clock
    min_sample = MIN_SAMPLE if min_sample is None else min_sample
    number = [1, 1]
    if min_sample > 0:
        for side, fn in enumerate((ours, peer)):
            t0 = timer()
            _silently(fn)
            number[side] = int(min(1000, max(1, np.ceil(min_sample / max(timer() - t0,
                                                                        1e-9)))))
    ratios, t_ours, t_peer, outs = [], [], [], [None, None]
    for r in range(max(1, int(repeat))):
        t = [0.0, 0.0]
        for side in ((0, 1) if r % 2 == 0 else (1, 0)):
            fn = ours if side == 0 else peer
            t0 = timer()
            for _ in range(number[side]):
                outs[side] = _silently(fn)
            t[side] = (timer() - t0) / number[side]
        t_ours.append(t[0])
        t_peer.append(t[1])
        ratios.append(t[0] / max(t[1], 1e-12))
    med = statistics.median(ratios)
    noise = max(abs(x / med - 1.0) for x in ratios) if med > 0 else float("inf")
    return {"ratio": med, "noise": noise, "ratios": ratios, "number": number,
            "t_ours": statistics.median(t_ours), "t_peer": statistics.median(t_peer),
            "outs": outs}


def judge(current, baseline, floor=FLOOR, floors=None):
    """``{name: verdict}`` for the measured comparisons ``current`` (name -> {"ratio",
    "noise"}) against ``baseline`` (the same, for the mode run): ``"regressed"`` when the
    ratio exceeds the baseline's by more than ``max(noise, baseline noise, floor)``
    (relative; ``floors[name]``, where given, raises that comparison's floor),
    ``"improved"`` when it is below by more than that, ``"new"`` without a baseline entry,
    else ``"same"``; with the allowance used."""
    out = {}
    floors = floors or {}
    for name, cur in current.items():
        base = baseline.get(name)
        if base is None:
            out[name] = ("new", None)
            continue
        allow = max(float(cur["noise"]), float(base["noise"]), float(floor),
                    float(floors.get(name) or 0.0))
        change = cur["ratio"] / base["ratio"] - 1.0
        if change > allow:
            verdict = "regressed"
        elif change < -allow / (1.0 + allow):
            verdict = "improved"
        else:
            verdict = "same"
        out[name] = (verdict, allow)
    return out


def load_baseline(path=BASELINE):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}


def write_baseline(results, mode, path=BASELINE):
    data = load_baseline(path)
    data[mode] = {k: {"ratio": round(v["ratio"], 6), "noise": round(v["noise"], 6),
                      "t_ours": round(v["t_ours"], 6), "t_peer": round(v["t_peer"], 6)}
                  for k, v in results.items()}
    data["_about"] = ("ratios time(ours) / time(peer), median of the rounds, and their noise "
                      "(max relative distance of a round from the median), per mode; written "
                      "by python -m validation.bench --update-baseline")
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def slowed(fn, factor):
    """``fn`` made ``factor`` times slower (it sleeps after each call): the demonstration
    that the check catches a slowed solver."""
    def slow():
        t0 = time.perf_counter()
        out = fn()
        time.sleep((factor - 1.0) * (time.perf_counter() - t0))
        return out
    return slow


# ---------------------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------------------
def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m validation.bench",
                                description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the small sizes (about 2 minutes)")
    p.add_argument("--repeat", type=int, default=REPEAT, help="rounds per comparison")
    p.add_argument("--floor", type=float, default=FLOOR,
                   help="the relative worsening always tolerated")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run these comparisons only")
    p.add_argument("--update-baseline", action="store_true",
                   help="write the measured ratios as the baseline of this mode")
    p.add_argument("--slow", action="append", default=[], metavar="NAME=FACTOR",
                   help="make our side of NAME FACTOR times slower (a demonstration)")
    p.add_argument("--baseline", type=Path, default=BASELINE, help=argparse.SUPPRESS)
    p.add_argument("--no-record", action="store_true",
                   help="do not write validation/results/bench/bench.md")
    args = p.parse_args(argv)
    names = {c.name for c in COMPARISONS}
    for n in args.only or []:
        if n not in names:
            p.error(f"--only: unknown comparison {n!r}; one of {sorted(names)}")
    slow = {}
    for s in args.slow:
        name, _, factor = s.partition("=")
        if name not in names:
            p.error(f"--slow: unknown comparison {name!r}; one of {sorted(names)}")
        try:
            slow[name] = float(factor)
        except ValueError:
            p.error(f"--slow takes NAME=FACTOR with a number FACTOR >= 1; got {s!r}")
        if not slow[name] >= 1.0:
            p.error(f"--slow takes NAME=FACTOR with a number FACTOR >= 1; got {s!r}")
    args.slow = slow
    return args


def main(argv=None):
    args = _parse(argv)
    mode = "quick" if args.quick else "full"
    t_start = time.perf_counter()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    machine, load0 = H.machine(), H.load_average()
    print(f"# Benchmarks against the peers ({mode})\nmachine: {machine}\n"
          f"load average (1, 5, 15 min) at the start: {load0}", flush=True)
    say(f"mode: {mode}; {args.repeat} rounds per comparison (order alternating), ratio = "
        f"median of time(ours) / time(peer), noise = max |round / median - 1|; regressed "
        f"when ratio > baseline x (1 + max(noise, baseline noise, floor {args.floor:g}))")
    results, rows, skipped = {}, [], []
    for comp in COMPARISONS:
        if args.only and comp.name not in args.only:
            continue
        try:
            sides = comp.setup(args.quick)
        except Skip as exc:
            skipped.append(comp.name)
            say(f"{comp.name}: skipped: {exc}")
            continue
        ours = sides.ours
        if comp.name in args.slow:
            ours = slowed(ours, args.slow[comp.name])
            say(f"{comp.name}: our side slowed {args.slow[comp.name]:g}x (--slow)")
        t0 = time.perf_counter()
        _silently(sides.warm_ours)
        c_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        if sides.warm_peer is not None:
            _silently(sides.warm_peer)
        c_peer = time.perf_counter() - t0
        if sides.blas_threads is None:
            res = measure(ours, sides.peer, args.repeat)
        else:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=sides.blas_threads, user_api="blas"):
                res = measure(ours, sides.peer, args.repeat)
        res["compile"] = (c_ours, c_peer)
        res["check"] = sides.check(*res["outs"]) if sides.check else ""
        res["size"] = sides.size
        results[comp.name] = res
        print(f"  {comp.name}: ratio {res['ratio']:.3f} (rounds "
              + " ".join(f"{x:.3f}" for x in res["ratios"]) + ")", flush=True)

    baseline = load_baseline(args.baseline).get(mode, {})
    verdicts = judge(results, baseline, args.floor,
                     {c.name: c.floor for c in COMPARISONS if c.floor is not None})
    for comp in COMPARISONS:
        if comp.name not in results:
            continue
        r = results[comp.name]
        b = baseline.get(comp.name)
        verdict, allow = verdicts[comp.name]
        rows.append([comp.name, comp.peer, r["size"], r["t_ours"], r["t_peer"], r["ratio"],
                     f"{100 * r['noise']:.0f}%", b["ratio"] if b else None,
                     f"{100 * allow:.0f}%" if allow is not None else "-", verdict,
                     f"{r['compile'][0]:.2f} / {r['compile'][1]:.2f}", r["check"]])
    say()
    say(H.table(["comparison", "peer", "size", "ours s", "peer s", "ratio", "noise",
                 "baseline", "allowed", "verdict", "compile s (ours / peer)", "answers"],
                rows))
    say()
    regressed = [k for k, (v, _) in verdicts.items() if v == "regressed"]
    elapsed = time.perf_counter() - t_start
    say(f"{len(results)} compared, {len(skipped)} skipped"
        + (f" ({', '.join(skipped)})" if skipped else "")
        + f", {len(regressed)} regressed" + (f": {', '.join(regressed)}" if regressed else "")
        + f"; {elapsed:.0f} s in all")
    if args.update_baseline:
        write_baseline(results, mode, args.baseline)
        say(f"baseline of the {mode} mode written: {args.baseline}")
    if not args.no_record:
        H.write_current(f"Benchmarks against the peers: ratios and the baseline ({mode})",
                        args.quick, lines, machine_line=machine, load_start=load0,
                        name=RECORD_NAME)
    return 1 if regressed and not args.update_baseline else 0


if __name__ == "__main__":
    sys.exit(main())
