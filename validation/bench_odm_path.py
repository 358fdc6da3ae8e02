"""ODM along the seeds' regularization grid, fast paths against LIBODM's dual CD.

* **Linear**, ``lam`` in ``{2^0, 2^2, ..., 2^20}`` (11 points), on spambase (KEEL, 4,597 x 57,
  features scaled to [0, 1]; ``validation/data/keel/balanced/spambase.dat``), ``mu = 0.8``,
  ``theta = 0.2``. Fast: ``fast.path(prob, lam=grid)`` (``method="auto"``: TRON on ``f_O``,
  warm-started from strong to weak), every point certified at the default tolerance 1e-6.
  Peer: LIBODM's dual coordinate descent (``-s 0``) at ``eps = 1e-3``, one cold solve per
  ``lam`` (LIBODM has no path), and, with ``--libodm-tron``, LIBODM's own trust-region
  Newton (``-s 1``). Target: fast total <= 0.25 x LIBODM dual CD total.
* **RBF**, ``lam`` in ``{2^0, 2^4, ..., 2^16}``, on a 3,000-point subsample of the same set
  (``gamma = 1/d``, the seeds' ``delta``), fast: ``fast.path`` (``method="auto"``: the DCD
  at strong regularization, the kernel Newton with its low-rank-preconditioned CG at weak;
  warm-started, the Gram computed once for the whole path), against LIBODM's dual CD at
  ``eps = 1e-3``. Target: <= 0.25 x LIBODM, every point
  certified. And ``lam = 2^20`` in at most 10 x the time of ``lam = 2^8`` (fast, cold).

* **Linear SVM** (hinge, no intercept) at ``C = 2^10`` on spambase: the fast DCD against
  LIBLINEAR (``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``). Target: <= 1.0 x
  LIBLINEAR at the same objective (``--svm-only`` runs this part alone).
* ``--auto``: the measurements behind ``method="auto"`` (DCD, TRON, SVRG; see
  ``fast/odm.py``'s ``choose_method``).
* ``--default``: the A/B behind ``fast.solve``'s default for ODM (``method=None`` is
  ``"auto"``; it used to be ``"dcd"``): both on the KEEL sets, features in [0, 1]
  and raw, linear and RBF along lam, tiny subsets, CSR; every point's status checked
  against its certificate (``--default --default-only linear|csr|tiny --repeat 1``,
  ``--default --default-only rbf --repeat 2``; all groups in one run without
  ``--default-only``).

LIBODM has no license: it is not part of this repository. Build it outside (``make && make
lib`` in a checkout of Avanti1980/libodm) and set ``LIBODM_DIR``; without it the LIBODM
columns are skipped with a message (the fast side still runs). The ctypes bindings are
``bench_libodm.py``'s.

    OPENBLAS_NUM_THREADS=1 LIBODM_DIR=/path/to/libodm python validation/bench_odm_path.py
"""
from __future__ import annotations

import ctypes as C
import warnings
from pathlib import Path

import numpy as np

import _harness as H
import bench_libodm as L

TARGET = 0.25
DATA = Path(__file__).resolve().parent / "data" / "keel" / "balanced"


def load_keel(name, scale=True):
    """A KEEL ``.dat`` file: ``(X scaled to [0, 1] per feature, labels as strings)``."""
    rows = []
    with open(DATA / f"{name}.dat") as fh:
        for line in fh:
            line = line.strip()
            if line and not line.startswith("@"):
                rows.append([v.strip() for v in line.split(",")])
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    lab = np.array([r[-1] for r in rows])
    if scale:
        lo, hi = X.min(0), X.max(0)
        X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    return np.ascontiguousarray(X), lab


def binary(lab):
    classes = np.unique(lab)
    return np.where(lab == classes[-1], 1.0, -1.0)


def libodm_train_solver(lib, data, kernel, lam, mu, theta, gamma, eps, solver):
    """As :func:`bench_libodm.libodm_train` with LIBODM's ``solver`` (0 dual CD, 1 TRON)."""
    if solver == 0:
        return L.libodm_train(lib, data, kernel, lam, mu, theta, gamma, eps)
    param = L.Parameter(solver, kernel, lam, mu, theta, 2, gamma, 0.0, 5, eps)
    err = lib.check_parameter(C.byref(param))
    if err:
        raise ValueError(f"LIBODM rejected the parameters: {err.decode()}")
    mp = lib.train(C.byref(data.prob), C.byref(param))
    try:
        return "w", np.ctypeslib.as_array(mp.contents.w, (data.d,)).copy()
    finally:
        lib.free_and_destroy_model(C.byref(mp))


def certify_all(probs, sols):
    out = []
    for p, s in zip(probs, sols):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(p.certify(s))
    return out


def linear_case(R, args, lib, X, y, mu, theta, eps):
    import fast
    from fast.path import path as fast_path
    import refmodels as rm

    grid = [2.0 ** k for k in range(0, 21, 2)]
    prob = rm.ODM(X, y, lam=1.0, mu=mu, theta=theta)
    sides = {"fast.path (TRON, warm)": lambda: fast_path(prob, lam=grid),
             "fast.solve each (auto, cold)": lambda: [
                 fast.solve(rm.ODM(X, y, lam=l, mu=mu, theta=theta), method="auto")
                 for l in grid]}
    if lib is not None:
        data = L.LibodmData(X, y)

        def libodm(solver):
            out, ts = [], []
            for l in grid:
                t, r = H.timed(lambda: libodm_train_solver(lib, data, L.LINEAR, l, mu, theta,
                                                           0.0, eps, solver))
                out.append(r)
                ts.append(t)
            return out, ts
        sides[f"LIBODM dual CD eps={eps:g}"] = lambda: libodm(0)
        if args.libodm_tron:
            sides[f"LIBODM TRON (-s 1) eps={eps:g}"] = lambda: libodm(1)
    res = H.interleaved(sides, args.repeat)
    probs = [rm.ODM(X, y, lam=l, mu=mu, theta=theta) for l in grid]
    sols = res["fast.path (TRON, warm)"][2]
    certs = certify_all(probs, sols)
    rows = []
    lk = f"LIBODM dual CD eps={eps:g}"
    tk = f"LIBODM TRON (-s 1) eps={eps:g}"
    for k, (l, p, s, c) in enumerate(zip(grid, probs, sols, certs)):
        row = [f"2^{int(np.log2(l))}", s.time, s.n_iter, s.info.get("cg_iter", "-"), s.status,
               c.ok, c.worst[1]]
        if lib is not None:
            (outs, ts) = res[lk][2]
            f_l = p.primal_value(outs[k][1])
            row += [ts[k], H.rel_gap(f_l, s.objective)]
            if args.libodm_tron:
                (outs_t, ts_t) = res[tk][2]
                row += [ts_t[k], H.rel_gap(p.primal_value(outs_t[k][1]), s.objective)]
        rows.append(row)
    heads = ["lam", "fast s", "Newton it", "CG it", "status", "certified", "worst scaled"]
    if lib is not None:
        heads += ["LIBODM CD s", "CD obj above fast (rel)"]
        if args.libodm_tron:
            heads += ["LIBODM TRON s", "TRON rel"]
    R.table(heads, rows, caption=f"linear ODM, {X.shape[0]} x {X.shape[1]}, mu={mu}, "
                                 f"theta={theta}: per point (fast: the best path run)")
    tot = [[k, t, " ".join(f"{x:.3f}" for x in ts)] for k, (t, ts, _) in res.items()]
    R.table(["side", "best total s", "runs s"], tot, caption="totals over the 11-point grid")
    n_ok = sum(c.ok for c in certs)
    R.say(f"linear grid: {n_ok}/{len(grid)} fast points certified at 1e-6")
    if lib is not None:
        ratio = res["fast.path (TRON, warm)"][0] / res[lk][0]
        R.say(f"linear grid: fast.path / LIBODM dual CD = {ratio:.3f} (target <= {TARGET}: "
              f"{H.verdict(ratio, TARGET)})")
    R.say()


def rbf_case(R, args, lib, X, y, mu, theta, eps, gamma):
    import fast
    from fast.path import path as fast_path
    import refmodels as rm

    grid = [2.0 ** k for k in range(0, 17, 4)]
    kern = rm.kernels.RBF(gamma=gamma)

    def run_fast():
        return fast_path(rm.ODM(X, y, lam=1.0, mu=mu, theta=theta, kernel=kern), lam=grid)
    sides = {"fast.path (auto, warm)": run_fast}
    if lib is not None:
        data = L.LibodmData(X, y)

        def libodm():
            out, ts = [], []
            for l in grid:
                t, r = H.timed(lambda: L.libodm_train(lib, data, L.RBF, l, mu, theta, gamma,
                                                      eps))
                out.append(r)
                ts.append(t)
            return out, ts
        sides[f"LIBODM dual CD eps={eps:g}"] = libodm
    res = H.interleaved(sides, args.rbf_repeat)
    probs = [rm.ODM(X, y, lam=l, mu=mu, theta=theta, kernel=kern) for l in grid]
    sols = res["fast.path (auto, warm)"][2]
    certs = certify_all(probs, sols) if not args.no_rbf_certify else [None] * len(grid)
    lk = f"LIBODM dual CD eps={eps:g}"
    rows = []
    for k, (l, p, s, c) in enumerate(zip(grid, probs, sols, certs)):
        row = [f"2^{int(np.log2(l))}", s.solver.replace("fast:", ""), s.time, s.n_iter,
               s.status,
               "-" if c is None else c.ok, "-" if c is None else c.worst[1]]
        if lib is not None:
            (outs, ts) = res[lk][2]
            f_l = p.solution_from(coef=outs[k][1]).objective
            row += [ts[k], H.rel_gap(f_l, s.objective)]
        rows.append(row)
    heads = ["lam", "method", "fast s", "epochs / steps", "status", "certified",
             "worst scaled"]
    if lib is not None:
        heads += ["LIBODM CD s", "CD obj above fast (rel)"]
    R.table(heads, rows, caption=f"RBF ODM (gamma={gamma:g}), {X.shape[0]} x {X.shape[1]}: "
                                 "per point")
    tot = [[k, t, " ".join(f"{x:.3f}" for x in ts)] for k, (t, ts, _) in res.items()]
    R.table(["side", "best total s", "runs s"], tot, caption="totals over {2^0, 2^4, ..., 2^16}")
    if certs[0] is not None:
        R.say(f"RBF grid: {sum(c.ok for c in certs)}/{len(grid)} fast points certified")
    if lib is not None:
        ratio = res["fast.path (auto, warm)"][0] / res[lk][0]
        R.say(f"RBF grid: fast.path / LIBODM dual CD = {ratio:.3f} (target <= {TARGET}: "
              f"{H.verdict(ratio, TARGET)})")
    if not args.skip_weak:
        # method="auto" (fast/odm.py choose_method): the DCD at 2^8, the Newton at 2^20;
        # each timing includes building the Gram (a fresh problem), best of --repeat
        def cold(k):
            return fast.solve(rm.ODM(X, y, lam=2.0 ** k, mu=mu, theta=theta, kernel=kern),
                              method="auto")
        res_w = H.interleaved({"2^8": lambda: cold(8), "2^20": lambda: cold(20)}, args.repeat)
        (t8, _, s8), (t20, _, s20) = res_w["2^8"], res_w["2^20"]
        r = t20 / t8
        R.say(f"RBF cold solves (method='auto'): lam=2^8 {t8:.2f} s ({s8.solver}, {s8.status}, "
              f"{s8.n_iter} iterations), lam=2^20 {t20:.2f} s ({s20.solver}, {s20.status}, "
              f"{s20.n_iter} iterations): ratio {r:.1f} "
              f"(target <= 10 with both optimal: "
              f"{H.verdict(r, 10) if s20.status == 'optimal' else 'not met (2^20 not optimal)'})")
    R.say()


def svm_case(R, args, X, y, C=2.0 ** 10):
    """Linear SVM (hinge, no intercept) at C = 2^10 against LIBLINEAR
    (``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``), same data."""
    import fast
    import refmodels as rm
    from sklearn.svm import LinearSVC

    prob = rm.SVM(X, y, C=C)
    H.warmup(lambda: fast.solve(rm.SVM(X[::20], y[::20], C=1.0)))

    def liblinear(tol):
        return LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=tol,
                         max_iter=10 ** 7).fit(X, y).coef_.ravel()
    sides = {"fast DCD default tol": lambda: fast.solve(prob),
             "fast DCD tol=1e-3": lambda: fast.solve(prob, tol=1e-3),
             "LIBLINEAR tol=1e-4 (default)": lambda: liblinear(1e-4),
             "LIBLINEAR tol=1e-6": lambda: liblinear(1e-6)}
    res = H.interleaved(sides, args.repeat)
    objs = {k: (prob.primal_value(v[2]) if isinstance(v[2], np.ndarray)
                else H.canonical_objective(prob, v[2])) for k, v in res.items()}
    ref = min(objs.values())
    rows = [[k, t, " ".join(f"{x:.3f}" for x in ts), objs[k], H.rel_gap(objs[k], ref)]
            for k, (t, ts, _) in res.items()]
    R.table(["solver", "best s", "runs s", "primal objective", "rel above best"], rows,
            caption=f"linear SVM, hinge, C = 2^10, no intercept, {X.shape[0]} x {X.shape[1]}")
    for lk in ("LIBLINEAR tol=1e-4 (default)", "LIBLINEAR tol=1e-6"):
        ratio = res["fast DCD default tol"][0] / res[lk][0]
        R.say(f"linear SVM C=2^10: fast default / {lk} = {ratio:.2f} (target <= 1.0 at the "
              f"same objective: {H.verdict(ratio, 1.0)}; fast objective "
              f"{H.rel_gap(objs['fast DCD default tol'], objs[lk]):+.1e} relative to it)")
    R.say()


def auto_case(R, args):
    """The measurements behind ``method="auto"`` (fast/odm.py ``choose_method``): DCD, TRON
    and SVRG, each cold at its default (certified) tolerance, and what ``"auto"`` takes, on
    the real sets, one sparse high-dimensional synthetic set and two with more features than
    points (dense and CSR), along lam."""
    import fast
    import refmodels as rm
    import scipy.sparse as sp

    sets = []
    X, lab = load_keel("spambase")
    sets.append(("spambase 4597 x 57", X, binary(lab)))
    X, lab = load_keel("magic")
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], 7000, replace=False))
    sets.append(("magic 7000 x 10", X[idx], binary(lab)[idx]))
    m, d = (20000, 5000)
    Xs = sp.random(m, d, density=0.002, format="csr", random_state=0, dtype=np.float64)
    Xs.data[:] = 1.0
    wtrue = rng.normal(size=d)
    ys = np.where(Xs @ wtrue + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    sets.append((f"sparse synthetic {m} x {d}, 0.2% nnz (CSR)", Xs, ys))
    # more features than points (the wide sets: auto takes the DCD there)
    Xg = rng.normal(size=(1000, 5000)) / np.sqrt(5000)
    sets.append(("gaussian 1000 x 5000 (wide)", Xg, np.where(
        Xg @ rng.normal(size=5000) + 0.3 * rng.normal(size=1000) > 0, 1.0, -1.0)))
    m, d = (2000, 100000)
    Xs = sp.random(m, d, density=0.002, format="csr", random_state=1, dtype=np.float64)
    Xs = sp.csr_matrix(sp.diags(1.0 / np.sqrt(np.asarray(Xs.multiply(Xs).sum(1)).ravel()))
                       @ Xs)
    ys = np.where(Xs @ rng.normal(size=d) + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    sets.append((f"sparse synthetic {m} x {d}, 0.2% nnz, unit rows (CSR, wide)", Xs, ys))
    Xw, yw = sets[0][1][::20], sets[0][2][::20]
    comp = H.warmup(lambda: [fast.solve(rm.ODM(Xx, yw, lam=4.0), method=meth)
                             for Xx in (Xw, sp.csr_matrix(Xw))
                             for meth in ("dcd", "tron", "svrg")])
    R.say(f"compile / warm-up of the three methods (dense and CSR): {comp:.2f} s")
    rows = []
    for name, X, y in sets:
        for k in args.auto_lams:
            lam = 2.0 ** k
            wide = X.shape[1] > X.shape[0]
            for method in ("dcd", "tron", "svrg", "auto"):
                if method == "dcd" and k > args.auto_dcd_max and not wide:
                    rows.append([name, f"2^{k}", method, "skipped (crawls)", "-", "-", "-"])
                    continue
                prob = rm.ODM(X, y, lam=lam, mu=0.8, theta=0.2)
                t, sol = H.timed(lambda: fast.solve(prob, method=method, random_state=0))
                ok = prob.certify(sol, reference=False).ok
                took = method
                if method == "auto":          # (a fallback's first method keeps its record)
                    first = [k for k in ("tron", "dcd", "newton")
                             if isinstance(sol.info.get(k), dict)]
                    took = "auto: " + " -> ".join(first + [sol.solver.split(":")[-1]])
                rows.append([name, f"2^{k}", took, t, sol.status, sol.n_iter, ok])
    R.table(["data", "lam", "method", "seconds", "status", "iterations", "certified"], rows,
            caption="method='auto' measurements (one cold run each, default tolerance)")


#: ``--default``: the KEEL sets (``validation/data/keel/balanced``, numeric features) and
#: the largest log2(lam) at which the former default, the DCD, is still run beside ``auto``
#: (beyond it the DCD crawls for seconds to minutes a point: ``auto`` alone is run, and
#: still checked)
DEFAULT_SETS = ("australian", "heart", "ionosphere", "sonar", "wdbc", "pima", "bupa",
                "spambase", "magic")
DEFAULT_RBF_SETS = DEFAULT_SETS[:-1]


def default_case(R, args):
    """``method="dcd"`` (``fast.solve``'s former default for ODM) against
    ``method="auto"`` (the default since), each point solved by both in turn, after a
    warm-up compile, CPU seconds (``time.process_time``): on the KEEL sets features scaled
    to [0, 1] and raw, linear (lam = 2^0, 2^2, ..., 2^20; also as CSR) and RBF
    (gamma = 1/d on [0, 1], ``1 / (d var X)`` raw; lam = 2^0, 2^4, ..., 2^20, the
    Gram built outside the timing, both methods use it), and tiny subsets (m = 10, 20, 50,
    lam = 2^-8 ... 2^8). Every point is checked: ``optimal`` must certify
    (``prob.certify(sol)``), anything else must have warned. Beyond lam = 2^
    ``--default-dcd-max`` (linear; ``--default-dcd-max-raw`` on raw features) /
    ``--default-dcd-max-rbf`` the DCD is not run (it crawls), ``auto`` still is. ``auto``
    runs first at each point (it pays what the first solve of a problem costs); with
    ``--repeat`` r the best of r solves of each method (``--repeat 1`` is the cold view)."""
    import time

    import fast
    import refmodels as rm
    import scipy.sparse as sp
    from fast._kernels import build_gram

    def data(name, scale, cap):
        X, lab = load_keel(name, scale=scale)
        y = binary(lab)
        if X.shape[0] > cap:
            idx = np.sort(np.random.default_rng(0).choice(X.shape[0], cap, replace=False))
            X, y = X[idx], y[idx]
        return X, y

    def run(prob, method):
        """One solve, its CPU seconds and whether its status is honest; with ``--repeat``
        r > 1 the best of r (the first solve of a problem pays once for what the
        self-check keeps on it, e.g. the feature map on raw RBF data: the order of the two
        methods then decides, not the method)."""
        cpus = []
        for _ in range(max(1, args.repeat)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                c0 = time.process_time()
                sol = fast.solve(prob, method=method, random_state=0)
                cpus.append(time.process_time() - c0)
        cpu = min(cpus)
        ok = prob.certify(sol, reference=False).ok
        honest = ok if sol.status == "optimal" else bool(caught)
        name = sol.solver.replace("fast:", "") + ("+dcd" if sol.info.get("fallback") else "")
        return cpu, sol, name, honest

    Xw, yw = data("heart", True, 100)
    comp = H.warmup(lambda: [fast.solve(rm.ODM(Xx, yw, lam=lam, mu=0.8, theta=0.2, kernel=k),
                                        method=m)
                             for k in (rm.kernels.Linear(), rm.kernels.RBF(0.1))
                             for Xx in (Xw, sp.csr_matrix(Xw)) for lam in (1.0, 2.0 ** 16)
                             for m in ("dcd", "auto")])
    R.say(f"compile / warm-up: {comp:.2f} s")
    groups = [("linear [0,1]", True, "linear", False), ("linear raw", False, "linear", False),
              ("rbf [0,1]", True, "rbf", False), ("rbf raw", False, "rbf", False),
              ("linear [0,1] CSR", True, "linear", True)]
    groups = [g for g in groups if g[0].split()[0] + (" csr" if g[3] else "") in
              {"linear": {"linear"}, "rbf": {"rbf"}, "csr": {"linear csr"},
               "tiny": set()}.get(args.default_only, {"linear", "rbf", "linear csr"})]
    rows, summary = [], {}
    for gname, scale, kname, csr in groups:
        lin = kname == "linear"
        for name in (DEFAULT_SETS if lin else DEFAULT_RBF_SETS):
            X, y = data(name, scale, 7000 if lin else args.default_rbf_m)
            if csr:
                X = sp.csr_matrix(X)
            if lin:
                kern, exps = rm.kernels.Linear(), range(0, 21, 2)
                # raw features: the DCD crawls from the start (its epochs scale with ||x||^2)
                dmax = args.default_dcd_max if scale else args.default_dcd_max_raw
            else:
                g = 1.0 / X.shape[1] if scale else 1.0 / (X.shape[1] * X.var())
                kern, exps, dmax = rm.kernels.RBF(g), range(0, 21, 4), args.default_dcd_max_rbf
            for k in exps:
                prob = rm.ODM(X, y, lam=2.0 ** k, mu=0.8, theta=0.2, kernel=kern)
                if not lin:
                    build_gram(prob)
                ta, sa, na, ha = run(prob, "auto")
                s = summary.setdefault(gname, {"points": 0, "optimal": 0, "dishonest": 0,
                                               "dcd": 0.0, "auto": 0.0, "worse": []})
                s["points"] += 1
                s["optimal"] += sa.status == "optimal"
                s["dishonest"] += not ha
                row = [gname, f"{name} {X.shape[0]}x{X.shape[1]}", f"2^{k}"]
                if k <= dmax:
                    td, sd, nd, hd = run(prob, "dcd")
                    s["dishonest"] += not hd
                    s["dcd"] += td
                    s["auto"] += ta
                    if ta > 1.5 * td and ta - td > 0.01:
                        s["worse"].append(f"{name} 2^{k} ({ta / td:.1f}x)")
                    row += [td, sd.status, na, ta, sa.status, ta / max(td, 1e-9),
                            H.rel_gap(sa.objective, sd.objective), ha and hd]
                else:
                    row += ["-", "not run", na, ta, sa.status, "-", "-", ha]
                rows.append(row)
                print("  " + " | ".join(H.fmt(v) for v in row), flush=True)     # progress
    for name in (("heart", "sonar", "bupa") if args.default_only in (None, "tiny") else ()):
        for m in (10, 20, 50):
            X, y = data(name, True, m)
            if len(np.unique(y)) < 2:
                continue
            for kern in (rm.kernels.Linear(), rm.kernels.RBF(1.0 / X.shape[1])):
                gname = "tiny " + ("linear" if kern.is_linear else "rbf")
                for k in (-8, -4, 0, 4, 8):
                    prob = rm.ODM(X, y, lam=2.0 ** k, mu=0.8, theta=0.2, kernel=kern)
                    td, sd, nd, hd = run(prob, "dcd")
                    ta, sa, na, ha = run(prob, "auto")
                    s = summary.setdefault(gname, {"points": 0, "optimal": 0, "dishonest": 0,
                                                   "dcd": 0.0, "auto": 0.0, "worse": []})
                    s["points"] += 1
                    s["optimal"] += sa.status == "optimal"
                    s["dishonest"] += not (ha and hd)
                    s["dcd"] += td
                    s["auto"] += ta
                    rows.append([gname, f"{name} {m}x{X.shape[1]}", f"2^{k}", td, sd.status,
                                 na, ta, sa.status, ta / max(td, 1e-9),
                                 H.rel_gap(sa.objective, sd.objective), ha and hd])
                    print("  " + " | ".join(H.fmt(v) for v in rows[-1]), flush=True)
    R.table(["group", "data", "lam", "dcd cpu s", "dcd status", "auto method", "auto cpu s",
             "auto status", "auto / dcd", "auto obj vs dcd (rel)", "status honest"], rows,
            caption="fast.solve(ODM): method='dcd' (the former default) against method="
                    "'auto' (the default), CPU seconds per point")
    R.table(["group", "points", "auto optimal", "status dishonest", "dcd total (both run)",
             "auto total (same points)", "auto / dcd", "auto > 1.5 x dcd at"],
            [[g, s["points"], s["optimal"], s["dishonest"], s["dcd"], s["auto"],
              s["auto"] / max(s["dcd"], 1e-9), "; ".join(s["worse"]) or "-"]
             for g, s in summary.items()],
            caption="summary (status dishonest: 'optimal' not certified, or another status "
                    "without a warning; must be 0)")


def main():
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--mu", type=float, default=0.8)
    p.add_argument("--theta", type=float, default=0.2)
    p.add_argument("--eps", type=float, default=1e-3)
    p.add_argument("--rbf-m", type=int, default=3000)
    p.add_argument("--rbf-repeat", type=int, default=1)
    p.add_argument("--skip-rbf", action="store_true")
    p.add_argument("--skip-weak", action="store_true", help="skip the RBF lam=2^20 solve")
    p.add_argument("--no-rbf-certify", action="store_true")
    p.add_argument("--libodm-tron", action="store_true",
                   help="also time LIBODM's own trust-region Newton (-s 1) on the linear grid")
    p.add_argument("--svm-only", action="store_true",
                   help="only the linear SVM (hinge) at C = 2^10 against LIBLINEAR")
    p.add_argument("--auto", action="store_true",
                   help="only the measurements behind method='auto' (DCD / TRON / SVRG)")
    p.add_argument("--default", action="store_true",
                   help="only method='dcd' (the former default) against 'auto' (the "
                        "default) on the KEEL sets, scaled and raw, linear and RBF")
    p.add_argument("--default-only", choices=["linear", "rbf", "csr", "tiny"],
                   help="--default: only this group (default: all)")
    p.add_argument("--default-dcd-max-raw", type=int, default=4,
                   help="--default: largest log2(lam) at which the DCD is run (linear, raw)")
    p.add_argument("--default-dcd-max", type=int, default=12,
                   help="--default: largest log2(lam) at which the DCD is run (linear)")
    p.add_argument("--default-dcd-max-rbf", type=int, default=16,
                   help="--default: largest log2(lam) at which the DCD is run (RBF)")
    p.add_argument("--default-rbf-m", type=int, default=2000,
                   help="--default: RBF sets subsampled to this many points")
    p.add_argument("--auto-lams", type=int, nargs="+", default=[0, 10, 20])
    p.add_argument("--auto-dcd-max", type=int, default=12,
                   help="largest log2(lam) at which the DCD is run in --auto")
    args = p.parse_args()
    # (--auto keeps its own record, bench_odm_path_auto.md)
    R = H.Report("ODM along the seeds' lambda grid: fast paths vs LIBODM"
                 + (": the measurements behind method='auto'" if args.auto else ""), args,
                 name=f"{H.script_name()}_auto" if args.auto else None)
    lib, where = L.load_libodm()
    if lib is None:
        R.say(f"LIBODM not found ({where}); set LIBODM_DIR to a directory holding libodm.so "
              "built outside this repository. LIBODM columns skipped.")
    else:
        R.say(f"LIBODM: {where}")
    from fast.path import path as fast_path
    import refmodels as rm

    if args.auto:
        auto_case(R, args)
        R.record()
        return
    if args.default:
        default_case(R, args)
        R.record()
        return
    X, lab = load_keel("spambase")
    y = binary(lab)
    if args.svm_only:
        svm_case(R, args, X, y)
        R.record()
        return
    if args.quick:
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(X.shape[0], 1000, replace=False))
        X, y = X[idx], y[idx]
    Xs, ys = X[::10], y[::10]
    comp = H.warmup(lambda: (fast_path(rm.ODM(Xs, ys, mu=0.8, theta=0.2), lam=[1.0, 4.0]),
                             fast_path(rm.ODM(Xs[:200], ys[:200], mu=0.8, theta=0.2,
                                              kernel=rm.kernels.RBF(0.1)), lam=[1.0, 4.0])))
    R.say(f"compile / warm-up (TRON, path, kernel DCD on small instances): {comp:.2f} s")
    R.say(f"data: KEEL spambase, {X.shape[0]} x {X.shape[1]}, features scaled to [0, 1]")
    linear_case(R, args, lib, X, y, args.mu, args.theta, args.eps)
    if not args.skip_rbf:
        m = min(args.rbf_m if not args.quick else 600, X.shape[0])
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(X.shape[0], m, replace=False))
        rbf_case(R, args, lib, X[idx], y[idx], args.mu, args.theta, args.eps,
                 1.0 / X.shape[1])
    svm_case(R, args, X, y)
    R.record()


if __name__ == "__main__":
    main()
