"""``refmodels verify``, the main job: every family's primal and dual solved on built-in data
by the reference (CVXPY), both certified, one row per family and kernel printed as it
finishes; with the fast solvers present, their columns too (the one place where refmodels
reaches into :mod:`fast`, lazily), and a legend at the end. Exit status 1 if any
certificate fails."""
from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

from refmodels import datasets
from refmodels.kernels import RBF, Linear

from refmodels import registry as _registry

from ._common import CLIError, _describe, _json_safe, families, with_capability


def _binary_data(m=120):
    X, y = datasets.load("heart")
    return X[:m], y[:m]


def _fast_options(prob):
    """``fast.solve``'s options for a family's rows (the registry's ``verify_fast``)."""
    fam = _registry.FAMILIES.get(type(prob).__name__)
    return dict(fam.verify_fast) if fam is not None else {}


def _case(family, kernel, data, params, make, setting="", first_half=False):
    return {"family": family, "kernel": kernel, "data": data, "params": params,
            "setting": setting, "make": make, "first_half": first_half}


#: the built-in data sets of the rows, in the table's order; a family's rows take the one
#: its class asks for (see :func:`_data_kind`)
_DATA_KINDS = ("binary", "multiclass", "base_kernels", "test_points")


def _data_kind(fam, cls):
    caps = getattr(cls, "capabilities", ())
    for kind in ("base_kernels", "test_points"):
        if kind in caps:
            return kind
    return "multiclass" if fam.multiclass else "binary"


def _data_sets():
    """``{kind: (data label, [(kernel name, kernel label, make(cls, kernel, params))])}``:
    binary rows on heart (linear and RBF), multi-class ones on iris (mcODM's Alg. 3 outer
    loop, both forms of the inner relaxed QP), base kernels on heart with two base kernels
    of different scales (both weighted at the optimum), test points on wine (training points
    and a batch of test points, one problem per test point, each solved in both forms: four
    points, from all three classes)."""
    Xb, yb = _binary_data()
    d = Xb.shape[1]
    Xi, yi = datasets.load("iris")
    Xi, yi = Xi[::2], yi[::2]
    Xm, ym = Xb[:60], yb[:60]
    Xw, yw = datasets.load("wine")
    Xtr, ytr, Xte = Xw[::3], yw[::3], Xw[1::45]
    dw = Xw.shape[1]

    def on(X, y, *rest):
        return lambda cls, k, p: cls(X, y, *rest, kernel=k, **p)

    return {
        "binary": (f"heart[{len(yb)}]",
                   [("linear", Linear(), "linear", on(Xb, yb)),
                    ("rbf", RBF(gamma=1.0 / d), f"rbf(gamma=1/{d})", on(Xb, yb))]),
        "multiclass": (f"iris[{len(yi)}]",
                       [("linear", Linear(), "linear", on(Xi, yi)),
                        ("rbf", RBF(gamma=0.25), "rbf(gamma=0.25)", on(Xi, yi))]),
        "base_kernels": (f"heart[{len(ym)}]",
                         [("lin+rbf", None, None,
                           lambda cls, k, p: cls(Xm, ym, kernels=[
                               Linear(), RBF(gamma=1.0 / Xm.shape[1])], **p))]),
        "test_points": (f"wine[{len(ytr)}x{len(Xte)}]",
                        [("linear", Linear(), "linear", on(Xtr, ytr, Xte)),
                         ("rbf", RBF(gamma=1.0 / dw), f"rbf(gamma=1/{dw})",
                          on(Xtr, ytr, Xte))]),
    }, {"base_kernels": {"base kernels": f"linear, rbf(gamma=1/{Xm.shape[1]})"}}


def _cases():
    """The rows of the table: family (the name ``certify`` takes), kernel, data, the
    hyperparameters (for the legend), a short setting note and a factory: every registry
    family's ``verify`` cases, one row per kernel of its data set, grouped by data set."""
    data, extra = _data_sets()
    rows = []
    for kind in _DATA_KINDS:
        label, kernels = data[kind]
        for fam in list(_registry.FAMILIES.values()):
            if not fam.verify:
                continue
            try:
                cls = fam.problem_class()
            except (ImportError, AttributeError):       # not in this build: no rows
                continue
            if _data_kind(fam, cls) != kind:
                continue
            for vc in fam.verify:
                for kname, k, klabel, make in kernels:
                    params = {**vc.params, **({"kernel": klabel} if klabel else extra[kind])}
                    rows.append(_case(fam.name, kname, label, params,
                                      lambda make=make, cls=cls, k=k, p=vc.params: make(cls, k, p),
                                      vc.setting, vc.in_first_half(kname)))
    return rows


def _verify_row(case, use_fast, progress=None):
    row = {k: case[k] for k in ("family", "setting", "kernel", "data")}
    row["params"] = {k: v for k, v in case["params"].items()}
    try:
        prob = case["make"]()
    except (ImportError, AttributeError) as exc:       # family not available in this build
        row.update(verdict="N/A", error=str(exc))
        return row
    except Exception as exc:                            # noqa: BLE001 - reported in the row
        row.update(verdict="ERROR", error=_describe(exc))
        return row
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            sp = prob.solve(form="primal")
            sd = prob.solve(form="dual")
            cp = prob.certify(sp, reference=sd)
            cd = prob.certify(sd, reference=sp)
            row["time"] = time.perf_counter() - t0
    except Exception as exc:                            # noqa: BLE001 - reported in the row
        row.update(verdict="ERROR", error=_describe(exc))
        return row
    P = float(np.sum(sp.objective))
    D = float(np.sum(cd.values["dual_objective"]))
    row.update(P=P, D=D, gap=abs(P - D) / (abs(P) + prob.objective_unit),
               kkt=max(abs(cp.worst[1]), abs(cd.worst[1])),
               ok=cp.ok and cd.ok)
    failing = sorted(set(cp.failing) | set(cd.failing))
    if failing:
        row["failing"] = failing
    if use_fast:
        try:
            _fast_columns(prob, sp, row, progress)
        except Exception as exc:                        # noqa: BLE001 - reported in the row
            row["fast_ok"] = False
            row.setdefault("failing", []).append(f"fast: {_describe(exc)}")
    row["verdict"] = "OK" if row["ok"] and row.get("fast_ok", True) else "FAIL"
    return row


def _fast_columns(prob, ref, row, progress=None):
    try:
        import fast
    except ImportError:
        return
    t0 = time.perf_counter()
    if progress:
        progress.start(row)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast.solve(prob, **_fast_options(prob))     # JIT warm-up (compile time apart)
    except ValueError as exc:
        if "no fast solver" in str(exc):
            if progress:
                progress.done(row, None)
            return
        raise
    row["fast_warmup"] = time.perf_counter() - t0
    if progress:
        progress.done(row, row["fast_warmup"])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fast.solve(prob, **_fast_options(prob))
    row["fast_time"] = time.perf_counter() - t0
    cert = prob.certify(sol, reference=ref)
    row["fast_gap"] = (abs(float(np.sum(sol.objective)) - row["P"])
                       / (abs(row["P"]) + prob.objective_unit))
    row["fast_ok"] = cert.ok
    if not cert.ok:
        row.setdefault("failing", []).extend(f"fast:{f}" for f in cert.failing)


def _fast_cache_dir(pkg):
    """Where numba keeps the cache of the modules in ``pkg``: ``__pycache__`` next to the
    sources, or its own sub-directory of ``NUMBA_CACHE_DIR`` when that is set."""
    from numba.core import config as nb_config

    if not getattr(nb_config, "CACHE_DIR", ""):
        return os.path.join(pkg, "__pycache__")
    from numba.core import caching

    locator = (getattr(caching, "UserProvidedCacheLocator", None)        # (older numba:
               or getattr(caching, "_UserProvidedCacheLocator", None))   # the _ name)
    if locator is None:
        return None
    return os.path.join(nb_config.CACHE_DIR,
                        locator.get_suitable_cache_subpath(os.path.join(pkg, "__init__.py")))


#: the modules of :mod:`fast` whose compiled code ``verify`` loads (the others' code is
#: compiled into theirs): a first run compiles these. (Not ``_prox``: DRR's rows run its
#: prox in numpy, so no index of it ever appeared and every run looked like a first one.)
_VERIFY_NUMBA_MODULES = ("_dcd", "_smo", "_mcodm_bcd")


def _fast_cache_cold():
    """True when numba's on-disk cache of :mod:`fast` looks missing or stale (a first run on
    this machine, an empty ``NUMBA_CACHE_DIR``, or sources changed since): no index file for
    a module ``verify`` needs, or an index older than its source. ``None`` when it cannot
    tell (``fast`` or numba absent)."""
    try:
        import fast
        pkg = os.path.dirname(os.path.abspath(fast.__file__))
        cache = _fast_cache_dir(pkg)
    except Exception:                                   # noqa: BLE001
        return None
    if cache is None:
        return None
    try:
        cached = os.listdir(cache)
    except OSError:
        return True
    for name in os.listdir(pkg):
        if not name.endswith(".py"):
            continue
        src = os.path.join(pkg, name)
        mod = name[:-3]
        idx = [os.path.join(cache, f) for f in cached
               if f.startswith(mod + ".") and f.endswith(".nbi")]
        try:
            if not idx:
                if mod in _VERIFY_NUMBA_MODULES:
                    with open(src, encoding="utf-8") as fh:
                        if "cache=True" in fh.read():
                            return True
                continue
            if max(os.path.getmtime(f) for f in idx) < os.path.getmtime(src):
                return True
        except OSError:
            return None
    return False


class _Progress:
    """Progress of the fast warm-up solves on stderr while numba compiles.

    ``lines=True`` (rows run in several processes): one whole line per row when its fast
    solver is ready, so that lines of different processes do not interleave."""

    def __init__(self, total, out, lines=False):
        self.total, self.out, self.i, self.compiled = total, out, 0, 0.0
        self.lines = lines

    def start(self, row):
        self.i += 1
        if self.lines:
            return
        print(f"  [{self.i}/{self.total}] {row['family']} {row['kernel']}: compiling the fast "
              "solver (or loading it from the cache) ...", end="", file=self.out, flush=True)

    def done(self, row, seconds):
        if seconds is not None:
            self.compiled += seconds
        if self.lines:
            if seconds is not None and seconds >= 0.5:
                setting = f" {row['setting']}" if row.get("setting") else ""
                print(f"  {row['family']}{setting} {row['kernel']}: fast solver compiled (or "
                      f"loaded from the cache) in {seconds:.1f} s", file=self.out, flush=True)
            return
        if seconds is None:
            print(" no fast solver", file=self.out, flush=True)
        else:
            print(f" {seconds:.1f} s", file=self.out, flush=True)


_COLS = (f"{'family':<7} {'setting':<18} {'kernel':<7} {'data':<11} {'P*':>14} {'D*':>14} "
         f"{'gap':>9} {'worst KKT':>9} {'time[s]':>8}")


def _row_head(fast_cols):
    head = _COLS + (f" {'fast gap':>9} {'fast[s]':>8}" if fast_cols else "") + "  verdict"
    return head + "\n" + "-" * len(head)


def _row_line(r, fast_cols):
    lead = f"{r['family']:<7} {r.get('setting', ''):<18} {r['kernel']:<7} {r['data']:<11}"
    if r["verdict"] in ("N/A", "ERROR"):
        word = "not available" if r["verdict"] == "N/A" else "ERROR"
        return f"{lead} {word}: {r['error']}"
    line = (f"{lead} {r['P']:14.8g} {r['D']:14.8g} {r['gap']:9.1e} {r['kkt']:9.1e} "
            f"{r['time']:8.2f}")
    if fast_cols:
        if "fast_time" in r:
            line += f" {r['fast_gap']:9.1e} {r['fast_time']:8.3f}"
        else:
            line += f" {'-':>9} {'-':>8}"
    line += f"  {r['verdict']}"
    if r.get("failing"):
        line += f" ({', '.join(r['failing'])})"
    return line


def _print_table(rows, out):
    """The whole table at once (kept for importers; ``verify`` prints row by row)."""
    fast_cols = any("fast_time" in r for r in rows)
    print(_row_head(fast_cols), file=out)
    for r in rows:
        print(_row_line(r, fast_cols), file=out)


def _legend(rows, fast_cols):
    lines = [
        "",
        "Columns:",
        "  P*         the primal objective at the reference primal solution (CVXPY, Clarabel),",
        "             in SPEC's canonical scaling",
        "  D*         the dual objective at the reference dual solution",
        "  gap        duality gap |P* - D*| / (|P*| + u), u the objective's unit (see certify)",
        "  worst KKT  the largest scaled residual (feasibility, complementarity, stationarity,",
        "             duality and objective gaps) of the two certificates: the primal solution",
        "             certified against the dual one, and the dual against the primal",
        "  time[s]    both reference solves and both certificates",
    ]
    if fast_cols:
        lines += [
            "  fast gap   |P(fast point) - P*| / (|P*| + u) for the fast (numba) solver's point,",
            "             which is certified too",
            "  fast[s]    one fast solve, timed after a warm-up solve (compilation not included)",
            "             (the default method of each family; ODM: method='dcd', seed 002's Alg. 1)",
        ]
    lines += [
        "  verdict    OK when every certificate of the row holds at tol 1e-6 (scaled residuals)",
    ]
    if with_capability("test_points", sorted({r["family"] for r in rows})):
        lines += ["  DRR and DRM rows: one problem per test point; P* and D* are sums over the "
                  "test points",
                  "             (data wine[train x test]), the residuals the worst over them"]
    lines += ["", "Hyperparameters of each row (certify takes the same names: "
                  "--family NAME --param name=value):"]
    seen = set()
    for r in rows:
        params = ", ".join(f"{k}={_fmt_param(v)}" for k, v in r["params"].items())
        key = (r["family"], params, r["data"])
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"  {r['family']:<7} {r['data']:<11} {params}")
    return "\n".join(lines)


def _fmt_param(v):
    if isinstance(v, float) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return str(v)


def _select_families(requested):
    if not requested:
        return None
    known = _verify_families()
    out = set()
    for item in requested:
        for name in item.split(","):
            name = name.strip()
            if not name:
                continue
            match = [f for f in known if f.lower() == name.lower()]
            if not match:
                extra = (f" ({name} is certifiable with 'refmodels certify' but has no row in "
                         "verify)") if name.lower() in {f.lower() for f in families()} else ""
                raise CLIError(f"--family must be one of {', '.join(known)} (case-insensitive); "
                               f"got {name!r}{extra}")
            out.add(match[0])
    if not out:
        raise CLIError("--family needs a family name")
    return out


def _verify_families():
    """The families with a row in ``verify``: the registry's, in its order (EpsMKL is
    certifiable but has no row of its own)."""
    return tuple(n for n in families() if _registry.FAMILIES[n].verify)


#: Which of two processes runs a row (``jobs=2``) is the registry's ``first_half`` of each
#: case: the rows whose fast solvers share compiled code stay in one process, so that a
#: first run compiles each solver once, the two halves in parallel. The first half is the
#: SMO's (SVM with an intercept, SVMm, EpsSVM, MKLm, ODML and LDM with a kernel; the linear
#: rows of SVMm, EpsSVM and the SVM with an intercept run it too), the costliest compile by
#: far, DRM's kernel row (closed form, cheap) and DRR's kernel row (its prox runs in numpy:
#: nothing to compile); the second everything else (the DCD: the linear SVM, ODML, LDM and
#: ODM, which share one compiled epoch loop, ODM's kernel path; mcODM's block coordinate
#: descent; DRR's and DRM's linear rows), so that the first half is not longer than it must
#: be (ODML's and LDM's linear rows in the first half would compile the DCD's linear epoch
#: loop a second time there). The two DRR/DRM kernel rows are there for a warm run (the
#: numba cache present), where the two halves then take about the same time (the split's
#: timings: validation/decisions.md). The kernel SVM without intercept runs the SMO
#: (``fast.svm.choose_method``), its linear row the DCD.
def _half(case):
    return 0 if case.get("first_half") else 1


def _cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _default_jobs():
    """Two processes when two cores are there for us and ``fork`` is available (and the
    process has not used CVXPY yet, :func:`_fork_safe`), else one."""
    import multiprocessing as mp

    return 2 if _cores() >= 2 and "fork" in mp.get_all_start_methods() else 1


class _LineQueue:
    """A text stream (for ``print``) that sends whole lines through a queue."""

    def __init__(self, queue):
        self.queue, self.buf = queue, ""

    def write(self, text):
        self.buf += text
        while "\n" in self.buf:
            line, self.buf = self.buf.split("\n", 1)
            self.queue.put(("err", line))
        return len(text)

    def flush(self):
        pass


def _worker(queue, cases, indices, use_fast, total, cold, blas_threads=1):
    """A forked process: the rows ``indices``, each sent back (with the progress lines) as
    soon as it is done. Its BLAS runs ``blas_threads`` threads: two processes each running
    OpenBLAS's default pool (one thread per core) oversubscribe the cores, and the LAPACK
    calls of the reference rows (eigendecompositions, least squares on the active set) then
    wait on each other, and the table gets slower (validation/decisions.md)."""
    from threadpoolctl import threadpool_limits

    try:
        progress = _Progress(total, _LineQueue(queue), lines=True) if cold else None
        with threadpool_limits(limits=blas_threads, user_api="blas"):
            for i in indices:
                queue.put(("row", i, _verify_row(cases[i], use_fast=use_fast,
                                                 progress=progress)))
    except BaseException as exc:                        # noqa: BLE001 - reported by the parent
        queue.put(("fatal", _describe(exc)))
    finally:
        queue.put(("end", None))


def _fork_safe():
    """Forking is safe while this process has not used CVXPY yet: Clarabel's native state
    after a solve deadlocks a forked copy. A fresh ``refmodels verify`` has not; a
    program that solved before calling :func:`cmd_verify` gets the rows run in its own
    process."""
    return "cvxpy" not in sys.modules


#: what CVXPY's own import takes from ``scipy.stats`` (cvxpy 1.9: ``entropy``, for the numeric
#: value of its quantum relative entropy atom, which no family uses)
_STATS_NAMES_CVXPY_TAKES = ("entropy",)


def _import_cvxpy():
    """Import CVXPY without importing ``scipy.stats`` with it (before the rows: in the parent,
    before the fork, or in this process with ``--jobs 1``).

    CVXPY's atoms import ``entropy`` from ``scipy.stats`` at import time, and importing
    ``scipy.stats`` costs about as much as the rest of CVXPY (most of it scipy's docstring
    rewriting; validation/decisions.md); no row of the table uses it. While CVXPY is
    imported, ``sys.modules["scipy.stats"]`` is a stand-in whose ``entropy`` is a function
    that imports the real ``scipy.stats`` when it is called and then calls the real
    ``entropy`` (same arguments, same result); any other name asked of the stand-in imports
    the real module at once and is taken from it. The stand-in is removed afterwards, so a
    later ``import scipy.stats`` loads the real module. Nothing is done when CVXPY or
    ``scipy.stats`` is already imported."""
    import importlib
    import types

    if "cvxpy" in sys.modules or "scipy.stats" in sys.modules:
        importlib.import_module("cvxpy")
        return
    stand_in = types.ModuleType("scipy.stats", "stand-in while CVXPY is imported (refmodels "
                                               "verify)")

    def real():
        if sys.modules.get("scipy.stats") is stand_in:
            del sys.modules["scipy.stats"]
        return importlib.import_module("scipy.stats")

    def deferred(name):
        def call(*args, **kwargs):
            return getattr(real(), name)(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = f"scipy.stats.{name}, imported on the first call"
        return call

    def getattr_(name):
        if name.startswith("__"):          # the import system's questions (__path__, ...)
            raise AttributeError(name)
        return getattr(real(), name)

    for name in _STATS_NAMES_CVXPY_TAKES:
        setattr(stand_in, name, deferred(name))
    stand_in.__getattr__ = getattr_
    sys.modules["scipy.stats"] = stand_in
    try:
        importlib.import_module("cvxpy")
    finally:
        if sys.modules.get("scipy.stats") is stand_in:
            del sys.modules["scipy.stats"]
        scipy = sys.modules.get("scipy")
        if scipy is not None and vars(scipy).get("stats") is stand_in:
            delattr(scipy, "stats")


def _halves(cases):
    return [[i for i, c in enumerate(cases) if _half(c) == h] for h in (0, 1)]


def _parallel(cases, jobs):
    """Whether the rows run in two processes: two jobs, rows in both halves, fork safe."""
    return jobs >= 2 and all(_halves(cases)) and _fork_safe()


def _run_rows(cases, use_fast, jobs, cold, err):
    """Yield ``(index, row)`` as rows finish: in this process (``jobs=1``), or in two forked
    processes running the two halves of the table (:func:`_half`) side by side."""
    halves = _halves(cases)
    if not _parallel(cases, jobs):
        _import_cvxpy()
        progress = _Progress(len(cases), err) if cold else None
        for i, case in enumerate(cases):
            yield i, _verify_row(case, use_fast=use_fast, progress=progress)
        return
    import multiprocessing as mp
    import queue as queue_mod

    _import_cvxpy()                 # imported once, here: the forked processes share it
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    blas = max(1, _cores() // len(halves))
    procs = [ctx.Process(target=_worker, args=(q, cases, half, use_fast, len(cases), cold,
                                               blas), daemon=True) for half in halves]
    pending = {i: p for p, half in zip(procs, halves) for i in half}
    fatal = []
    ended = 0
    try:
        for p in procs:
            p.start()
        while ended < len(procs):
            try:
                msg = q.get(timeout=1.0)
            except queue_mod.Empty:
                if all(not p.is_alive() for p in procs) and q.empty():
                    break                               # a process died without a word
                continue
            if msg[0] == "row":
                pending.pop(msg[1], None)
                yield msg[1], msg[2]
            elif msg[0] == "err":
                print(msg[1], file=err, flush=True)
            elif msg[0] == "fatal":
                fatal.append(msg[1])
            else:
                ended += 1
    finally:
        for p in procs:                                 # ended: let them flush and exit
            p.join(timeout=5 if ended == len(procs) else 0)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    for i in sorted(pending):
        p = pending[i]
        why = fatal[0] if fatal else f"the process running it ended with exit code {p.exitcode}"
        row = {k: cases[i][k] for k in ("family", "setting", "kernel", "data")}
        row.update(params=dict(cases[i]["params"]), verdict="ERROR", error=f"not run: {why}")
        yield i, row


def cmd_verify(args):
    chosen = _select_families(args.family)
    jobs = getattr(args, "jobs", None)
    if jobs is None:
        jobs = _default_jobs()
    elif not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise CLIError(f"--jobs must be a positive integer; got {jobs!r}")
    cases = [c for c in _cases() if chosen is None or c["family"] in chosen]
    use_fast = not args.no_fast
    out = sys.stdout
    fast_cols = use_fast and _fast_available()
    cold = bool(fast_cols and _fast_cache_cold())
    parallel = _parallel(cases, jobs)
    if cold:
        # the durations quoted are those of a first run from a clean clone (validation/decisions.md)
        how = ("in two processes, side by side: 12-33 s on two cores, by the machine's load"
               if parallel else "in this process: about 35 s")
        print("refmodels verify: first run on this machine (or the fast solvers changed): "
              f"compiling the fast solvers with numba, once ({how}), while the reference "
              "solves run; later runs load them from the cache.",
              file=sys.stderr, flush=True)
    rows = [None] * len(cases)
    t0 = time.perf_counter()
    if not args.json:
        print(f"refmodels verify: {len(cases)} rows, each the primal and the dual solved by the "
              "reference (CVXPY) and certified" + ("; plus the fast solver" if fast_cols else "")
              + ("; two processes, rows printed as they finish" if parallel else ""),
              file=out, flush=True)
        print(_row_head(fast_cols), file=out, flush=True)
    # --json prints nothing until the end: a bar of the rows on a terminal's stderr (tqdm)
    from .. import _progress

    bar = _progress.bar(total=len(cases), desc="refmodels verify", unit="row",
                        enabled=bool(args.json) and _is_terminal(sys.stderr))
    for i, row in _run_rows(cases, use_fast, jobs, cold, sys.stderr):
        rows[i] = row
        bar.update(1)
        if not args.json:
            print(_row_line(row, fast_cols), file=out, flush=True)
    bar.close()
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps(_json_safe(rows), indent=1), file=out)
    else:
        n_ok = sum(r["verdict"] == "OK" for r in rows)
        print(f"\n{n_ok} of {len(rows)} rows certified (tol 1e-6, scaled residuals) "
              f"in {elapsed:.1f} s", file=out)
        if any("fast_time" in r for r in rows):
            warm = sum(r.get("fast_warmup", 0.0) - r.get("fast_time", 0.0) for r in rows)
            print(f"fast columns: one solve after a warm-up solve; warm-up minus solve time "
                  f"(numba compilation or cache loading) {warm:.1f} s in all", file=out)
        print(_legend(rows, fast_cols), file=out, flush=True)
    return 0 if all(r["verdict"] in ("OK", "N/A") for r in rows) else 1


def _is_terminal(stream):
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _fast_available():
    try:
        import fast
    except ImportError:
        return False
    return fast is not None
