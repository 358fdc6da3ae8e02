"""ODM by the fast DCD against the ODM authors' LIBODM
(Avanti1980/libodm), RBF m = 3,000 and linear 100,000 x 20, LIBODM's dual coordinate
descent (``-s 0``) at ``eps = 1e-3``.

LIBODM has no license: it is NOT part of this repository, and no committed script builds it.
Build it yourself outside the repository (``make && make lib`` in its checkout) and point
``LIBODM_DIR`` at that directory (it must hold ``libodm.so``)::

    LIBODM_DIR=/path/to/libodm python validation/bench_libodm.py [--quick]

Without ``LIBODM_DIR`` (or without ``libodm.so`` there) the script says so and exits.

The training is called in-process through ctypes (the structures of LIBODM's ``odm.h``); the
data conversion to LIBODM's ``feature_node`` rows is done once, outside the timing; only
``train()`` is timed. LIBODM's parameters ``lambda, mu, theta`` are SPEC §4's (its
``solve_cd`` uses ``coef1 = 0.5 m (1-theta)^2 / lambda = a`` of eq. 15 and ``coef2 =
coef1/mu``); its RBF kernel is ``exp(-gamma ||x - z||^2)`` like ours; no bias feature (SPEC's
ODM has no intercept). Its model gives ``w`` (linear) or ``sv_coef = y_i (zeta_i - beta_i)``
(kernel: ``nu``, SPEC's coefficients). Both sides stop on the projected-gradient spread
``PGmax - PGmin <= eps`` of the same dual; the fast DCD (``method="dcd"``) is run at the
same ``tol`` and at its default (tight) tolerance, and ``fast.solve``'s default method
(``"auto"``: TRON on the linear kernel) beside them. Objectives: SPEC §4's
``f_O`` by ``ODM.primal_value`` at each side's point.

Target: fast / LIBODM <= 1.0 at an objective no worse than LIBODM's.
"""
from __future__ import annotations

import ctypes as C
import os
from pathlib import Path

import numpy as np

import _harness as H

TARGET = 1.0


class FeatureNode(C.Structure):
    _fields_ = [("index", C.c_int), ("value", C.c_double)]


class Problem(C.Structure):
    _fields_ = [("m", C.c_int), ("d", C.c_int), ("bias", C.c_int),
                ("y", C.POINTER(C.c_double)), ("x", C.POINTER(C.POINTER(FeatureNode)))]


class Parameter(C.Structure):
    _fields_ = [("solver", C.c_int), ("kernel", C.c_int), ("lambda_", C.c_double),
                ("mu", C.c_double), ("theta", C.c_double), ("degree", C.c_int),
                ("gamma", C.c_double), ("coef0", C.c_double), ("frequency", C.c_int),
                ("eps", C.c_double)]


class Model(C.Structure):
    _fields_ = [("m", C.c_int), ("d", C.c_int), ("bias", C.c_int), ("param", Parameter),
                ("w", C.POINTER(C.c_double)), ("total_sv", C.c_int),
                ("sv", C.POINTER(C.POINTER(FeatureNode))), ("sv_coef", C.POINTER(C.c_double))]


LINEAR, RBF = 0, 2          # odm.h: enum {LINEAR, POLY, RBF, SIGMOID}
_NODE = np.dtype([("index", np.int32), ("value", np.float64)], align=True)


def load_libodm():
    """The LIBODM shared library from ``$LIBODM_DIR``, or ``(None, reason)``."""
    root = os.environ.get("LIBODM_DIR")
    if not root:
        return None, "LIBODM_DIR is not set"
    so = Path(root) / "libodm.so"
    if not so.exists():
        return None, f"{so} does not exist (build LIBODM there: make && make lib)"
    lib = C.CDLL(str(so))
    lib.train.restype = C.POINTER(Model)
    lib.train.argtypes = [C.POINTER(Problem), C.POINTER(Parameter)]
    lib.check_parameter.restype = C.c_char_p
    lib.check_parameter.argtypes = [C.POINTER(Parameter)]
    lib.free_and_destroy_model.restype = None
    lib.free_and_destroy_model.argtypes = [C.POINTER(C.POINTER(Model))]
    printer = C.CFUNCTYPE(None, C.c_char_p)(lambda s: None)
    lib.set_print_string_function.argtypes = [C.CFUNCTYPE(None, C.c_char_p)]
    lib.set_print_string_function(printer)
    lib._keep = printer                        # keep the callback alive
    return lib, str(so)


class LibodmData:
    """``X, y`` in LIBODM's layout (dense rows of ``d`` nodes plus the ``-1`` terminator)."""

    def __init__(self, X, y):
        m, d = X.shape
        nodes = np.zeros((m, d + 1), dtype=_NODE)
        nodes["index"][:, :d] = np.arange(1, d + 1, dtype=np.int32)
        nodes["value"][:, :d] = X
        nodes["index"][:, d] = -1
        self.nodes = nodes
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        base = nodes.ctypes.data
        self.row_bytes = (d + 1) * _NODE.itemsize
        self.base = base
        rows = (C.POINTER(FeatureNode) * m)()
        addr = C.cast(rows, C.POINTER(C.c_uint64))
        np.ctypeslib.as_array(addr, (m,))[:] = base + np.arange(m, dtype=np.uint64) * self.row_bytes
        self.rows = rows
        self.prob = Problem(m, d, 0, self.y.ctypes.data_as(C.POINTER(C.c_double)), rows)
        self.m, self.d = m, d


def libodm_train(lib, data, kernel, lam, mu, theta, gamma, eps):
    """Train (solver CD) and return ``("w", w)`` or ``("coef", nu)``; frees the model."""
    param = Parameter(0, kernel, lam, mu, theta, 2, gamma, 0.0, 5, eps)
    err = lib.check_parameter(C.byref(param))
    if err:
        raise ValueError(f"LIBODM rejected the parameters: {err.decode()}")
    mp = lib.train(C.byref(data.prob), C.byref(param))
    try:
        model = mp.contents
        if kernel == LINEAR:
            return "w", np.ctypeslib.as_array(model.w, (data.d,)).copy()
        nu = np.zeros(data.m)
        n = model.total_sv
        if n > 0:
            addr = np.ctypeslib.as_array(C.cast(model.sv, C.POINTER(C.c_uint64)), (n,))
            idx = ((addr - np.uint64(data.base)) // np.uint64(data.row_bytes)).astype(np.int64)
            nu[idx] = np.ctypeslib.as_array(model.sv_coef, (n,))
        return "coef", nu
    finally:
        lib.free_and_destroy_model(C.byref(mp))


def run_case(R, args, lib, name, X, y, kernel_name, lam, mu, theta, gamma, eps):
    import fast
    import refmodels as rm

    kern = rm.kernels.RBF(gamma=gamma) if kernel_name == "rbf" else rm.kernels.Linear()
    data = LibodmData(X, y)
    kcode = RBF if kernel_name == "rbf" else LINEAR

    def ours(tol, method):
        return fast.solve(rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kern), tol=tol,
                          method=method, random_state=0)

    # "dcd" at LIBODM's eps: the same dual and stopping rule; the DCD at its default
    # (certified) tolerance; fast.solve's default method ("auto": TRON on the linear kernel)
    sides = {f"fast DCD tol={eps:g}": lambda: ours(eps, "dcd"),
             f"LIBODM eps={eps:g}": lambda: libodm_train(lib, data, kcode, lam, mu, theta,
                                                          gamma, eps),
             "fast DCD default tol": lambda: ours(None, "dcd"),
             "fast default (auto)": lambda: ours(None, None)}
    res = H.interleaved(sides, args.repeat)
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kern)
    objs, rows = {}, []
    for k, (t, ts, out) in res.items():
        if k.startswith("LIBODM"):
            what, val = out
            if what == "w":
                objs[k] = prob.primal_value(val)
            else:
                objs[k] = prob.solution_from(coef=val).objective
            it = "-"
        else:
            objs[k] = H.canonical_objective(prob, out)
            it = out.n_iter
        rows.append([k, t, " ".join(f"{x:.3f}" for x in ts), it, objs[k]])
    lk = f"LIBODM eps={eps:g}"
    for r in rows:
        r += [H.rel_gap(objs[r[0]], objs[lk]), res[r[0]][0] / res[lk][0]]
    R.table(["solver", "best s", "runs s", "iterations", "primal objective f_O",
             "rel gap to LIBODM", "time / LIBODM"], rows, caption=name)
    for k in (f"fast DCD tol={eps:g}", "fast DCD default tol", "fast default (auto)"):
        ratio = res[k][0] / res[lk][0]
        gap = H.rel_gap(objs[k], objs[lk])
        R.say(f"{name}: {k}: fast/LIBODM = {ratio:.3f} (target <= {TARGET}: "
              f"{H.verdict(ratio, TARGET)}); objective {'no worse' if gap <= 1e-12 else 'WORSE'} "
              f"than LIBODM's (rel {gap:+.2e}; round-off 1e-12 allowed)")
    R.say()


def main():
    args = H.parser(__doc__.splitlines()[0], lam=10.0, mu=0.8, theta=0.2,
                    eps=1e-3).parse_args()
    R = H.Report("ODM: fast DCD vs LIBODM (dual CD)", args)
    lib, where = load_libodm()
    if lib is None:
        R.say(f"LIBODM not found ({where}); set LIBODM_DIR to a directory holding libodm.so "
              "built outside this repository. Skipped.")
        R.record()
        return
    R.say(f"LIBODM: {where}")
    import fast
    import refmodels as rm

    Xs, ys = H.binary_data(200, 5, seed=1)
    comp = H.warmup(lambda: [fast.solve(rm.ODM(Xs, ys, kernel=kern), tol=t, method=m)
                             for kern in (rm.kernels.RBF(0.2), rm.kernels.Linear())
                             for t in (1e-3, None) for m in ("dcd", None)])
    R.say(f"compile / warm-up of the fast solver (kernel + linear, 200 x 5): {comp:.2f} s")
    lam, mu, theta, eps = args.lam, args.mu, args.theta, args.eps
    R.say(f"lam = {lam}, mu = {mu}, theta = {theta}, eps = tol = {eps:g}")
    m_rbf, (m_lin, d_lin) = (600, (10000, 20)) if args.quick else (3000, (100000, 20))
    d = 10
    X, y = H.binary_data(m_rbf, d, seed=0)
    run_case(R, args, lib, f"RBF (gamma = {1 / d:g}), m = {m_rbf}, d = {d}", X, y, "rbf",
             lam, mu, theta, 1.0 / d, eps)
    X, y = H.binary_data(m_lin, d_lin, seed=0)
    run_case(R, args, lib, f"linear, {m_lin} x {d_lin}", X, y, "linear", lam, mu, theta,
             0.0, eps)
    R.record()


if __name__ == "__main__":
    main()
