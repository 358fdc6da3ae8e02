"""cert.diagnose(): eight deliberately wrong solvers per family (ODM, SVM, LDM), each a small
numpy (Newton on the squared losses) or CVXPY (the hinge) solver of the wrong problem, are
named by the diagnosis; no candidate is named whose certificate does not hold; a point
stopped early is said to be so, without a library's cause; explanations know where a point
came from."""
import json
import subprocess
import sys

import numpy as np
import pytest

import refmodels as rm
from refmodels._variants import intercept_variant


# ---- the wrong solvers ------------------------------------------------------------------
def newton_squared(X, y, c_lo, c_hi, theta, reg_b=None, max_iter=200):
    """``min 1/2 ||w||^2 (+ reg_b/2 b^2) + c_lo sum max(0, 1-theta-g)^2 + c_hi sum
    max(0, g-1-theta)^2`` with ``g = y (X w + b)``; ``reg_b`` None: no intercept, 0: a free
    one. Newton with a backtracking line search (the objective is piecewise quadratic)."""
    m = X.shape[0]
    A = X if reg_b is None else np.hstack([X, np.ones((m, 1))])
    r = np.ones(A.shape[1])
    if reg_b is not None:
        r[-1] = reg_b
    v = np.zeros(A.shape[1])

    def parts(v):
        g = y * (A @ v)
        lo, hi = np.maximum(0, 1 - theta - g), np.maximum(0, g - 1 - theta)
        f = 0.5 * v @ (r * v) + c_lo * lo @ lo + c_hi * hi @ hi
        return f, r * v - A.T @ (y * (2 * c_lo * lo - 2 * c_hi * hi)), lo > 0, hi > 0

    f, grad, L, H = parts(v)
    for _ in range(max_iter):
        hess = np.diag(r) + 2 * c_lo * A[L].T @ A[L] + 2 * c_hi * A[H].T @ A[H]
        step = np.linalg.lstsq(hess, -grad, rcond=None)[0]
        t = 1.0
        while True:
            f2, g2, L2, H2 = parts(v + t * step)
            if f2 <= f + 1e-4 * t * grad @ step or t < 1e-12:
                break
            t *= 0.5
        v, f, grad, L, H = v + t * step, f2, g2, L2, H2
        if np.linalg.norm(grad) <= 1e-13 * (1 + np.linalg.norm(v)):
            break
    return (v, 0.0) if reg_b is None else (v[:-1], float(v[-1]))


def cvx_hinge(X, y, C, lam1=0.0, lam2=0.0, intercept=False, bias=None):
    """``min 1/2 ||w||^2 + 2 lam1 var(g) - lam2 mean(g) + C sum hinge(g)`` (LDM's pairwise
    variance is twice the variance), a free intercept or a constant column ``bias``."""
    import cvxpy as cp

    m = X.shape[0]
    A = X if bias is None else np.hstack([X, np.full((m, 1), bias)])
    w = cp.Variable(A.shape[1])
    b = cp.Variable() if intercept else 0.0
    g = cp.multiply(y, A @ w + b)
    gm = cp.sum(g) / m
    obj = 0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - g))
    if lam1:
        obj += lam1 * 2 * cp.sum_squares(g - gm) / m
    if lam2:
        obj -= lam2 * gm
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                       tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10)
    wv = np.asarray(w.value, float)
    if bias is not None:
        return wv[:-1], bias * wv[-1]
    return wv, (float(b.value) if intercept else 0.0)


def data(seed, m=60, d=12, offset=0.0, sep=0.8):
    """Two overlapping classes (``sep``: the shift between them, in units of the noise)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    X = rng.normal(size=(m, d)) + sep * y[:, None] * rng.normal(size=d) + offset
    return X, y


def diagnosis_of(prob, w, b):
    sol = prob.solution_from(w=w)
    if b != 0.0:
        sol.info["intercept"] = b                 # an intercept the problem does not have
    from refmodels.diagnose import certify_foreign_intercept

    cert = certify_foreign_intercept(prob, sol, 1e-6, "auto")
    assert not cert.ok, "a wrong solver's point must fail the original certificate"
    return cert.diagnose()


def matches(change, expected):
    if set(change) != set(expected):
        return False
    for k, v in expected.items():
        got = change[k]
        if isinstance(v, float):
            if not (isinstance(got, float) and abs(got - v) <= 1e-9 * abs(v)):
                return False
        elif got != v:
            return False
    return True


def _score(results):
    """``(named first, every named candidate certified afresh)``."""
    right = 0
    for name, dg, expected in results:
        assert all(c.certificate.ok for c in dg), name
        for c in dg:                        # each named candidate, re-certified afresh
            fresh = c.problem.certify(c.solution, reference=False)
            assert fresh.ok, (name, c.change)
        right += bool(dg.candidates) and any(matches(dg.best.change, e) for e in expected)
    return right


def _report(results):
    return "\n".join(f"{n}: expected {e}, got {[c.change for c in dg]}"
                     for n, dg, e in results)


# ---- ODM --------------------------------------------------------------------------------
def test_eight_wrong_odm_solvers_are_named():
    X, y = data(3, m=60, d=10)
    lam, mu, th = 30.0, 0.3, 0.1
    m = len(y)
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=th)
    Xo = X + 3.0                                   # an intercept worth fitting
    probo = rm.ODM(Xo, y, lam=lam, mu=mu, theta=th)
    c = lam / (m * (1 - th) ** 2)
    w, _ = newton_squared(X, y, c, c * mu, th)
    assert prob.certify(prob.solution_from(w=w)).ok         # the solver itself is right
    gamma = prob.margins(w)
    assert np.sum(gamma > 1 + th) >= 3                       # mu is determined by the point
    f = (1 - th) ** 2
    cases = [
        ("loss not divided by m", prob, newton_squared(X, y, c * m, c * mu * m, th),
         [{"lam": lam * m}]),
        ("lam x m", prob, newton_squared(X, y, c * m, c * m * mu, th), [{"lam": lam * m}]),
        ("lam / m", prob, newton_squared(X, y, c / m, c / m * mu, th), [{"lam": lam / m}]),
        ("lam x 2", prob, newton_squared(X, y, 2 * c, 2 * c * mu, th), [{"lam": 2 * lam}]),
        ("1/(1-theta)^2 dropped", prob, newton_squared(X, y, lam / m, lam / m * mu, th),
         [{"lam": lam * f}]),
        ("mu on the wrong side", prob, newton_squared(X, y, c * mu, c, th),
         [{"lam": lam * mu, "mu": 1 / mu}]),
        ("unregularised intercept", probo, newton_squared(Xo, y, c, c * mu, th, reg_b=0.0),
         [{"intercept": "free"}]),
        ("LIBLINEAR-style bias", probo, newton_squared(Xo, y, c, c * mu, th, reg_b=1.0),
         [{"intercept": "regularised", "bias": 1.0}]),
    ]
    results = [(n, diagnosis_of(p, *wb), e) for n, p, wb, e in cases]
    assert _score(results) >= 7, _report(results)
    text = str(results[0][1])
    assert "lam' = lam·m" in text and "not divided by m" in text and "certified at 1e-06" in text


# ---- SVM --------------------------------------------------------------------------------
def test_eight_wrong_svm_solvers_are_named():
    X, y = data(5, m=80, d=8, sep=0.3)
    C = 0.5
    m = len(y)
    prob = rm.SVM(X, y, C=C)
    Xo = X + 3.0
    probo = rm.SVM(Xo, y, C=C)
    w, b = cvx_hinge(X, y, C)
    assert prob.certify(prob.solution_from(w=w)).ok
    cases = [
        ("loss divided by m (seed 002's lam/m)", prob, cvx_hinge(X, y, C / m), [{"C": C / m}]),
        ("C x m", prob, cvx_hinge(X, y, C * m), [{"C": C * m}]),
        ("C / m", prob, cvx_hinge(X, y, C / m), [{"C": C / m}]),
        ("C x 2", prob, cvx_hinge(X, y, 2 * C), [{"C": 2 * C}]),
        ("squared hinge", prob, newton_squared(X, y, C, 0.0, 0.0),
         [{"loss": "squared_hinge", "lam": C * m}]),
        ("labels flipped", prob, cvx_hinge(X, -y, C), [{"y": "flipped"}]),
        ("unregularised intercept", probo, cvx_hinge(Xo, y, C, intercept=True),
         [{"fit_intercept": True}]),
        ("LIBLINEAR-style bias", probo, cvx_hinge(Xo, y, C, bias=1.0),
         [{"intercept": "regularised", "bias": 1.0}]),
    ]
    results = [(n, diagnosis_of(p, *wb), e) for n, p, wb, e in cases]
    assert _score(results) >= 7, _report(results)


# ---- LDM --------------------------------------------------------------------------------
def test_eight_wrong_ldm_solvers_are_named():
    X, y = data(7, m=80, d=10, sep=0.3)
    C, lam1, lam2 = 0.5, 0.3, 0.2
    m = len(y)
    prob = rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2)
    Xo = X + 3.0
    probo = rm.LDM(Xo, y, C=C, lam1=lam1, lam2=lam2)
    w, _ = cvx_hinge(X, y, C, lam1, lam2)
    assert prob.certify(prob.solution_from(w=w)).ok
    cases = [
        ("loss divided by m (ODML's lam/m)", prob, cvx_hinge(X, y, C / m, lam1, lam2),
         [{"C": C / m}]),
        ("C x m", prob, cvx_hinge(X, y, C * m, lam1, lam2), [{"C": C * m}]),
        ("C / m", prob, cvx_hinge(X, y, C / m, lam1, lam2), [{"C": C / m}]),
        ("C x 2", prob, cvx_hinge(X, y, 2 * C, lam1, lam2), [{"C": 2 * C}]),
        ("variance not pairwise", prob, cvx_hinge(X, y, C, lam1 / 2, lam2),
         [{"lam1": lam1 / 2}]),
        ("ODML's objective with LDM's numbers", prob, cvx_hinge(X, y, C / m, lam1 / 2, lam2),
         [{"C": C / m, "lam1": lam1 / 2}]),
        ("unregularised intercept", probo, cvx_hinge(Xo, y, C, lam1, lam2, intercept=True),
         [{"intercept": "free"}]),
        ("LIBLINEAR-style bias", probo, cvx_hinge(Xo, y, C, lam1, lam2, bias=1.0),
         [{"intercept": "regularised", "bias": 1.0}]),
    ]
    results = [(n, diagnosis_of(p, *wb), e) for n, p, wb, e in cases]
    assert _score(results) >= 7, _report(results)


# ---- a kernel ---------------------------------------------------------------------------
def test_an_rbf_odm_solver_with_lam_times_m_is_named():
    import fast

    X, y = data(11, m=50, d=3)
    kern = rm.kernels.RBF(gamma=0.3)
    prob = rm.ODM(X, y, lam=2.0, mu=0.5, theta=0.2, kernel=kern)
    wrong = fast.solve(rm.ODM(X, y, lam=2.0 * 50, mu=0.5, theta=0.2, kernel=kern))
    cert = prob.certify(prob.solution_from(coef=wrong.coef))
    assert not cert.ok
    dg = cert.diagnose()
    assert dg.candidates and matches(dg.best.change, {"lam": 100.0}), str(dg)


def test_rbf_gamma_read_as_sigma_is_named():
    import fast

    X, y = data(12, m=40, d=3)
    g = 0.7
    prob = rm.SVM(X, y, C=2.0, kernel=rm.kernels.RBF(gamma=g))
    wrong = fast.solve(rm.SVM(X, y, C=2.0, kernel=rm.kernels.RBF(gamma=1 / (2 * g * g))))
    cert = prob.certify(prob.solution_from(coef=wrong.coef))
    assert not cert.ok
    dg = cert.diagnose()
    assert dg.candidates and matches(dg.best.change, {"gamma": 1 / (2 * g * g)}), str(dg)


# ---- stopped early, right points, provenance ---------------------------------------------
def _gradient_descent_odm(prob, iters):
    X, y = prob.X, prob.y
    w = np.zeros(X.shape[1])
    c = prob.c
    L = 1 + 2 * c * max(1.0, prob.mu) * np.linalg.norm(X, 2) ** 2
    for _ in range(iters):
        g = y * (X @ w)
        lo = np.maximum(0, 1 - prob.theta - g)
        hi = np.maximum(0, g - 1 - prob.theta)
        w = w - (w - X.T @ (y * (2 * c * lo - 2 * c * prob.mu * hi))) / L
    return w


def test_a_solver_stopped_early_is_told_so_and_no_library_cause():
    X, y = data(13, m=80, d=5)
    prob = rm.ODM(X, y, lam=5.0, mu=0.5, theta=0.2)
    cert = prob.certify(prob.solution_from(w=_gradient_descent_odm(prob, 40)))
    assert not cert.ok
    dg = cert.diagnose()
    assert not dg.candidates and dg.stopped_early, str(dg)
    assert "stopped early" in str(dg) and "holds_at" in str(dg)
    text = str(cert) + json.dumps(cert.explain())
    for library in ("LIBSVM", "LIBLINEAR", "single precision"):
        assert library not in text
    assert "the coefficients are not the map of the dual variables" not in text


def test_an_optimal_point_has_nothing_to_diagnose_and_explain_says_how_tightly():
    import fast

    X, y = data(14, m=40, d=4)
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.2)
    cert = prob.certify(fast.solve(prob))
    assert cert.ok
    why = cert.explain()
    assert list(why) == ["certificate"] and "holds at tol=1e-06" in why["certificate"]
    assert "times below the tolerance" in why["certificate"]
    assert not cert.diagnose() and "nothing to diagnose" in str(cert.diagnose())


def test_a_far_point_is_not_called_stopped_early():
    X, y = data(15, m=40, d=4)
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.2)
    rng = np.random.default_rng(0)
    cert = prob.certify(prob.solution_from(w=50 * rng.normal(size=4)))
    dg = cert.diagnose()
    assert not dg.candidates and dg.stopped_early is False and "far from" in str(dg)


def test_libsvm_causes_only_for_libsvm_points():
    from sklearn.svm import SVC

    X, y = data(16, m=80, d=4)
    est = SVC(kernel="linear", C=1.0, tol=1e-2).fit(X, y)
    prob, sol = rm.from_sklearn(est, X, y)
    assert sol.info["source"] == "sklearn.SVC"
    cert = prob.certify(sol)
    assert not cert.ok
    assert "LIBSVM keeps kernel values in single precision" in str(cert)
    # the same arrays handed over by a user: no LIBSVM cause
    mine = prob.solution_from(coef=sol.coef, intercept=sol.intercept,
                              dual={"alpha": sol.variables["alpha"]})
    assert mine.info["source"] == "user"
    assert "LIBSVM" not in str(prob.certify(mine))


def test_each_cause_is_printed_once_with_its_residuals():
    X, y = data(17, m=60, d=4)
    prob = rm.ODM(X, y, lam=5.0, mu=0.5, theta=0.2)
    cert = prob.certify(prob.solution_from(w=3.0 * np.ones(4)))
    causes = cert.explain()
    assert set(causes) == set(cert.failing) and len(cert.failing) >= 2
    text = str(cert)
    lines = [ln for ln in text.splitlines() if "likely cause" in ln]
    assert len(lines) == len(set(causes.values()))
    for why in set(causes.values()):
        assert text.count(why) == 1
    assert any(", " in ln.split(":")[0] for ln in lines)     # one line names several


def test_objective_unit_is_printed_only_when_it_matters():
    import fast

    X, y = data(18, m=40, d=4)
    prob = rm.SVM(X, y, C=1.0)
    cert = prob.certify(fast.solve(prob))
    assert "objective_unit" in cert.values and not cert.unit_matters()
    assert "objective_unit" not in str(cert)
    tiny = rm.SVM(X * 1e6, y, C=2.0 ** -7)
    c2 = tiny.certify(fast.solve(tiny), reference=False)
    assert c2.unit_matters() and "objective_unit" in str(c2)


def test_model_files_and_adapters_carry_their_source(tmp_path):
    from refmodels import formats

    path = tmp_path / "m.model"
    path.write_text("solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\n"
                    "bias -1\nw\n0.5\n-0.25\n")
    X, y = data(19, m=10, d=2)
    d = formats.load_model(path, "liblinear", X, y)
    assert d["source"] == "liblinear"
    sol = rm.SVM(X, y, C=1.0).solution_from(**d)
    assert sol.info["source"] == "liblinear"


# ---- the free-intercept variants ---------------------------------------------------------
@pytest.mark.parametrize("family", ["ODM", "LDM", "ODML"])
def test_intercept_variant_certifies_a_free_intercept_optimum(family):
    X, y = data(20, m=40, d=5, offset=2.0)
    m = len(y)
    if family == "ODM":
        prob = rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.2)
        c = prob.c
        w, b = newton_squared(X, y, c, c * 0.5, 0.2, reg_b=0.0)
    elif family == "LDM":
        prob = rm.LDM(X, y, C=0.5, lam1=0.3, lam2=0.2)
        w, b = cvx_hinge(X, y, 0.5, 0.3, 0.2, intercept=True)
    else:
        prob = rm.ODML(X, y, lam=0.5 * m, mu1=0.6, mu2=0.2)    # = LDM(0.5, 0.3, 0.2)
        w, b = cvx_hinge(X, y, 0.5, 0.3, 0.2, intercept=True)
    cls = intercept_variant(type(prob))
    kw = {k: getattr(prob, k) for k in prob.rescale_params}
    if family == "ODM":
        kw.update(mu=prob.mu, theta=prob.theta)
    good = cls(X, y, b0=b, **kw)
    assert good.certify(good.solution_from(w=w, intercept=b), reference=False).ok
    moved = cls(X, y, b0=b + 0.05, **kw)                   # a wrong intercept fails
    assert not moved.certify(moved.solution_from(w=w, intercept=b + 0.05),
                             reference=False).ok
    # with b0 = 0 the variant's dual value is the family's
    zero = cls(X, y, b0=0.0, **kw)
    dual = prob.certify(prob.solution_from(w=w), reference=False).dual
    assert zero.dual_value(dual) == pytest.approx(prob.dual_value(dual), rel=1e-10, abs=1e-10)
    # the family's box dual has no room for the intercept's equality: no dual solver takes it
    with pytest.raises(NotImplementedError, match="equality"):
        good.box_dual


def test_diagnose_needs_a_certificate_of_a_problem():
    from refmodels.certify import Certificate

    with pytest.raises(ValueError, match="cert must come from problem.certify"):
        Certificate("ODM").diagnose()


# ---- the command line -------------------------------------------------------------------
def test_certify_diagnose_on_the_command_line(tmp_path):
    X, y = data(21, m=40, d=4)
    np.savetxt(tmp_path / "train.csv", np.column_stack([X, y]), delimiter=",")
    m = len(y)
    lam, mu, th = 2.0, 0.5, 0.3
    c = lam / (m * (1 - th) ** 2)
    w, _ = newton_squared(X, y, c * m, c * mu * m, th)
    np.savez(tmp_path / "w.npz", w=w)
    Xo = X + 3.0
    np.savetxt(tmp_path / "offset.csv", np.column_stack([Xo, y]), delimiter=",")
    wb, b = newton_squared(Xo, y, c, c * mu, th, reg_b=0.0)
    np.savez(tmp_path / "b.npz", w=wb, intercept=b)
    base = [sys.executable, "-m", "refmodels.cli", "certify", "--family", "ODM",
            "--param", "lam=2", "--param", "mu=0.5", "--param", "theta=0.3"]
    out = subprocess.run(base + ["--data", str(tmp_path / "train.csv"), "--solution",
                                 str(tmp_path / "w.npz"), "--diagnose"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 1, out.stderr
    assert "diagnosis:" in out.stdout and "lam' = lam·m = 80" in out.stdout
    js = subprocess.run(base + ["--data", str(tmp_path / "offset.csv"), "--solution",
                                str(tmp_path / "b.npz"), "--diagnose", "--json"],
                        capture_output=True, text=True, timeout=600)
    assert js.returncode == 1, js.stderr
    d = json.loads(js.stdout)
    assert d["diagnosis"]["candidates"][0]["change"] == {"intercept": "free"}
    assert "intercept (none here)" in d["failing"]
    # without --diagnose a solution's intercept for ODM stays bad input
    bad = subprocess.run(base + ["--data", str(tmp_path / "offset.csv"), "--solution",
                                 str(tmp_path / "b.npz")], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode == 2 and "intercept" in bad.stderr


@pytest.mark.parametrize("change", [{"theta": 0.0}, {"mu": 1.0}])
def test_an_odm_solver_that_leaves_a_term_out_is_named(change):
    X, y = data(3, m=60, d=10)
    m = len(y)
    lam, mu, th = 30.0, 0.3, 0.1
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=th)
    th2, mu2 = change.get("theta", th), change.get("mu", mu)
    c = lam / (m * (1 - th2) ** 2)
    dg = diagnosis_of(prob, *newton_squared(X, y, c, c * mu2, th2))
    assert dg.candidates and matches(dg.best.change, change), str(dg)


def test_a_liblinear_bias_on_an_svm_with_an_intercept_is_named():
    """The regularised bias is a problem without an intercept: on an SVM that fits one, the
    candidate drops it (with it kept, the point's free intercept at 0 fails sum y alpha = 0)."""
    X, y = data(5, m=80, d=8, sep=0.3)
    Xo = X + 3.0
    prob = rm.SVM(Xo, y, C=0.5, fit_intercept=True)
    w, b = cvx_hinge(Xo, y, 0.5, bias=1.0)
    cert = prob.certify(prob.solution_from(w=w, intercept=b))
    assert not cert.ok
    dg = cert.diagnose()
    assert dg.candidates and matches(dg.best.change,
                                     {"intercept": "regularised", "bias": 1.0}), str(dg)
    assert not dg.best.problem.has_intercept and dg.best.problem.X.shape[1] == 9


def test_the_diagnosis_reads_the_callers_workspace_and_keeps_none_of_its_candidates():
    """The original's feature map and reference come from the workspace the certificate was
    computed in (the candidates live in that feature space: no new eigendecomposition); the
    candidates are certified elsewhere, so the workspace holds entries of the original
    problem and its data only, and the problem's own default workspace stays unused."""
    import fast
    from refmodels.workspace import of

    X, y = data(22, m=40, d=3)
    prob = rm.ODM(X, y, lam=2.0, mu=0.5, theta=0.2, kernel=rm.kernels.RBF(gamma=0.3))
    wrong = fast.solve(prob.replace(lam=2.0 * 40))
    ws = rm.Workspace()
    cert = prob.certify(prob.solution_from(coef=wrong.coef, workspace=ws), workspace=ws)
    before = sorted(ws.keys())
    dg = cert.diagnose(workspace=ws)
    assert dg.candidates and matches(dg.best.change, {"lam": 80.0}), str(dg)
    assert sorted(ws.keys()) == before
    F = ws.peek("F", prob.data_key)
    assert F is not None and dg.best.problem.X is F
    kept = [o for objs, _ in ws._entries.values() for o in objs]
    assert all(o is prob or o is prob.X or o is prob.kernel for o in kept), kept
    assert len(of(prob)) == 0
