"""refmodels.testing.check_solver and refmodels check-solver: the project's fast solvers pass;
scikit-learn's SVC passes at a tight tol and fails at its default, diagnosed as stopped
early; a wrong solver fails with its mistake named; an executable (a Python script standing
in for a C++ solver) is checked through --command; LIBLINEAR's and LIBSVM's train where
installed."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import refmodels as rm
from refmodels.testing import check_solver, make_kernel, suite_problem

HYPER_SKIP = ("kernel", "gamma", "degree", "coef0")


def fast_solve(family):
    import fast

    def solve(X, y, params):
        hyper = {k: v for k, v in params.items() if k not in HYPER_SKIP}
        return fast.solve(getattr(rm, family)(X, y, kernel=make_kernel(params), **hyper))
    return solve


@pytest.mark.parametrize("family,kernels", [("ODM", ("linear", "rbf")), ("SVM", ("linear",)),
                                            ("LDM", ("linear",))])
def test_the_fast_solvers_pass(family, kernels):
    report = check_solver(fast_solve(family), family, n=12, kernels=kernels, seed=1)
    assert report.ok and report.pass_rate == 1.0 and len(report.cases) == 12
    assert {c.scale for c in report.cases} == {"unit", "raw", "small", "large", "offset",
                                               "duplicates"}
    assert np.all(report.holds_at <= 1e-6)
    assert "12/12 certificates hold" in str(report)


@pytest.mark.slow
def test_the_fast_odm_solver_passes_fifty_problems():
    report = check_solver(fast_solve("ODM"), "ODM", n=50)
    assert report.ok, str(report)


def svc_solve(tol):
    from sklearn.svm import SVC

    def solve(X, y, params):
        kw = {"gamma": params["gamma"]} if params["kernel"] == "rbf" else {}
        est = SVC(C=params["C"], kernel=params["kernel"], tol=tol, **kw).fit(X, y)
        coef = np.zeros(len(y))
        coef[est.support_] = est.dual_coef_[0]
        return {"coef": coef, "intercept": est.intercept_[0], "alpha": y * coef,
                "source": "sklearn.SVC"}
    return solve


SVC_SUITE = dict(n=10, kernels=("linear", "rbf"), scales=("unit", "small", "duplicates"),
                 fixed={"fit_intercept": True, "C": 1.0}, seed=2)


def test_sklearn_svc_passes_at_a_tight_tol():
    report = check_solver(svc_solve(1e-10), "SVM", **SVC_SUITE)
    assert report.ok, str(report)


def test_sklearn_svc_fails_at_its_default_tol_diagnosed_stopped_early():
    report = check_solver(svc_solve(1e-3), "SVM", raise_on_failure=False, **SVC_SUITE)
    assert not report.ok and report.pass_rate < 0.5
    for case in report.worst:
        assert case.diagnosis is not None and not case.diagnosis.candidates, case.line()
        assert case.diagnosis.stopped_early, str(case.diagnosis)
    text = str(report)
    assert "looks stopped early" in text and "reproduce:" in text
    with pytest.raises(AssertionError, match="certificates hold"):
        check_solver(svc_solve(1e-3), "SVM", **SVC_SUITE)


def test_a_wrong_solver_fails_with_its_mistake_named():
    import fast

    def solve(X, y, params):                      # lam x m: the loss not divided by m
        p = dict(params)
        p["lam"] *= len(y)
        hyper = {k: v for k, v in p.items() if k not in HYPER_SKIP}
        return {"w": fast.solve(rm.ODM(X, y, **hyper)).w}

    with pytest.raises(AssertionError) as err:
        check_solver(solve, "ODM", n=4, scales=("unit", "raw"))
    text = str(err.value)
    assert "0/4 certificates hold" in text
    assert "lam' = lam·m" in text and "not divided by m" in text
    assert "suite_problem('ODM', seed=" in text          # the reproducing code


def test_a_free_intercept_for_odm_is_named():
    import fast

    def solve(X, y, params):                      # an unregularised intercept, by hand
        hyper = {k: v for k, v in params.items() if k not in HYPER_SKIP}
        s = fast.solve(rm.ODM(np.hstack([X, 1e4 * np.ones((len(y), 1))]), y, **hyper))
        return {"w": s.w[:-1], "intercept": 1e4 * s.w[-1]}

    report = check_solver(solve, "ODM", n=3, scales=("offset",), raise_on_failure=False)
    assert not report.ok
    for case in report.worst:
        assert case.diagnosis.candidates, str(case.diagnosis)
        assert case.diagnosis.best.change.get("intercept") in ("free", "regularised")


def test_a_case_reproduces_from_its_code():
    X, y, params, prob = suite_problem("ODM", seed=123, scale="raw", kernel="rbf")
    X2, y2, params2, _ = suite_problem("ODM", seed=123, scale="raw", kernel="rbf")
    assert np.array_equal(X, X2) and np.array_equal(y, y2) and params == params2
    assert params["kernel"] == "rbf" and "gamma" in params and prob.m == len(y)


@pytest.mark.parametrize("kw,match", [
    (dict(family="XYZ"), "family must be one of"),
    (dict(n=0), "n must be an integer"),
    (dict(scales=("huge",)), "scales must be"),
    (dict(kernels=("sigmoid",)), "kernels must name"),
    (dict(tol=-1.0), "tol must be"),
    (dict(fixed=[1]), "fixed must be a dict"),
])
def test_bad_input_is_refused(kw, match):
    args = dict(family="ODM")
    args.update(kw)
    family = args.pop("family")
    with pytest.raises(ValueError, match=match):
        check_solver(lambda X, y, p: {"w": np.zeros(X.shape[1])}, family, **args)


def test_a_solver_that_raises_is_reported():
    def solve(X, y, params):
        raise RuntimeError("boom")

    report = check_solver(solve, "SVM", n=2, raise_on_failure=False)
    assert not report.ok and all("RuntimeError: boom" in c.error for c in report.cases)
    assert "the solver raised" in str(report)


# ---- the command line -------------------------------------------------------------------
SCRIPT = textwrap.dedent('''
    """A stand-in for a compiled ODM solver: LIBSVM-format data and a JSON of parameters in,
    the weights out (Newton on seed 002's eq. 18)."""
    import json, sys
    import numpy as np

    data, params, out = sys.argv[1:4]
    wrong = len(sys.argv) > 4
    rows = [line.split() for line in open(data) if line.strip()]
    y = np.array([float(r[0]) for r in rows])
    d = max(int(t.split(":")[0]) for r in rows for t in r[1:])
    X = np.zeros((len(rows), d))
    for i, r in enumerate(rows):
        for t in r[1:]:
            j, v = t.split(":")
            X[i, int(j) - 1] = float(v)
    m = X.shape[0]
    p = json.load(open(params))
    lam, mu, th = p["lam"], p["mu"], p["theta"]
    c = lam / ((1 if wrong else m) * (1 - th) ** 2)

    def f(v):
        g = y * (X @ v)
        return 0.5 * v @ v + c * np.sum(np.maximum(0, 1 - th - g) ** 2) \\
            + c * mu * np.sum(np.maximum(0, g - 1 - th) ** 2)

    w = np.zeros(X.shape[1])
    for _ in range(200):
        g = y * (X @ w)
        lo, hi = np.maximum(0, 1 - th - g), np.maximum(0, g - 1 - th)
        grad = w - X.T @ (y * (2 * c * lo - 2 * c * mu * hi))
        if np.linalg.norm(grad) <= 1e-13 * (1 + np.linalg.norm(w)):
            break
        L, H = lo > 0, hi > 0
        hess = np.eye(len(w)) + 2 * c * X[L].T @ X[L] + 2 * c * mu * X[H].T @ X[H]
        step = np.linalg.solve(hess, -grad)
        t = 1.0
        while f(w + t * step) > f(w) + 1e-4 * t * grad @ step and t > 1e-12:
            t *= 0.5
        w = w + t * step
    np.savez(out, w=w)
''')


def _cli(args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "refmodels.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900, env=env)


@pytest.mark.slow
def test_check_solver_command_line(tmp_path):
    script = tmp_path / "my_odm_train.py"
    script.write_text(SCRIPT)
    cmd = f"{sys.executable} {script} {{data}} {{params}} {{out}}"
    ok = _cli(["check-solver", "--family", "ODM", "--n", "3", "--command", cmd], tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "3/3 certificates hold" in ok.stdout
    bad = _cli(["check-solver", "--family", "ODM", "--n", "2", "--command", cmd + " wrong",
                "--json"], tmp_path)
    assert bad.returncode == 1, bad.stderr
    d = json.loads(bad.stdout)
    assert d["passed"] == 0 and d["exit_status"] == 1
    assert all("lam' = lam·m" in c["diagnosis"] for c in d["cases"])
    c0 = d["cases"][0]
    case = f"{c0['seed']}:{c0['scale']}:{c0['kernel']}"      # as the text's reproduce line
    one = _cli(["check-solver", "--family", "ODM", "--command", cmd + " wrong", "--case",
                case], tmp_path)
    assert one.returncode == 1 and "0/1 certificates hold" in one.stdout
    assert f"--case {case}" in one.stdout                     # the reproducing command


@pytest.mark.parametrize("args,match", [
    (["--family", "XYZ", "--command", "x {out}"], "--family must be one of"),
    (["--family", "ODM", "--command", "x {data}"], "must write the point to {out}"),
    (["--family", "ODM", "--command", "x {nope} {out}"], "unknown placeholder"),
    (["--family", "ODM", "--command", "x {out}", "--n", "0"], "--n must be"),
    (["--family", "ODM", "--command", "x {out}", "--scales", "huge"], "scales must be"),
])
def test_check_solver_command_line_bad_input(capsys, args, match):
    from refmodels.cli import main

    assert main(["check-solver", *args]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err, err


def test_a_command_that_fails_or_hangs_is_reported(tmp_path):
    crash = _cli(["check-solver", "--family", "SVM", "--n", "1", "--command",
                  f"{sys.executable} -c 'import sys; sys.exit(3)' {{out}}"], tmp_path)
    assert crash.returncode == 1 and "exited with status 3" in crash.stdout
    slow = _cli(["check-solver", "--family", "SVM", "--n", "1", "--timeout", "1",
                 "--command", f"{sys.executable} -c 'import time; time.sleep(30)' {{out}}"],
                tmp_path)
    assert slow.returncode == 1 and "ran out of its 1 s" in slow.stdout


def test_the_cases_files_are_removed_unless_kept(tmp_path):
    """Without --keep the cases' files live in a temporary directory that the run removes;
    with --keep they stay where the caller said."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    cmd = f"{sys.executable} -c 'import sys; sys.exit(3)' {{out}}"
    run = _cli(["check-solver", "--family", "SVM", "--n", "2", "--command", cmd, "--json"],
               tmp_path, env=env)
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["files"] is None
    assert list(scratch.iterdir()) == []
    kept = _cli(["check-solver", "--family", "SVM", "--n", "2", "--command", cmd,
                 "--keep", "mine"], tmp_path, env=env)
    assert kept.returncode == 1 and "files: mine" in kept.stdout
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["case000", "case001"]
    assert (tmp_path / "mine" / "case000" / "data.svm").is_file()


#: LIBLINEAR's command-line trainer: ``train`` as built from its sources, ``liblinear-train``
#: as Debian packages it
LIBLINEAR_TRAIN = shutil.which("liblinear-train") or shutil.which("train")


@pytest.mark.skipif(LIBLINEAR_TRAIN is None, reason="LIBLINEAR's train is not installed")
def test_liblinear_train_through_command(tmp_path):
    """LIBLINEAR's dual CD (-s 3, the hinge without intercept) passes at C = 1; with -B 1
    (a constant feature, its weight regularised) it fails, diagnosed as that bias."""
    common = ["check-solver", "--family", "SVM", "--param", "fit_intercept=false",
              "--param", "C=1", "--scales", "unit,duplicates", "--out-name", "model"]
    out = _cli(common + ["--n", "4", "--json", "--command",
                         f"{LIBLINEAR_TRAIN} -s 3 -c {{C}} -e 1e-10 -B -1 -q {{data}} {{out}}"],
               tmp_path)
    cases = json.loads(out.stdout)["cases"]
    assert all(c["ok"] for c in cases if c["scale"] == "unit"), out.stdout
    # near-duplicate points: LIBLINEAR may stop at its iteration cap; then it is told so,
    # and no other problem is named for it
    for c in cases:
        assert c["ok"] or "looks stopped early" in c["diagnosis"], c
    biased = _cli(common + ["--n", "2", "--json", "--command",
                            f"{LIBLINEAR_TRAIN} -s 3 -c {{C}} -e 1e-10 -B 1 -q {{data}} "
                            f"{{out}}"], tmp_path)
    assert biased.returncode == 1, biased.stderr
    for case in json.loads(biased.stdout)["cases"]:
        assert "regularised bias" in case["diagnosis"], case


@pytest.mark.skipif(shutil.which("svm-train") is None, reason="LIBSVM's svm-train is not "
                                                               "installed")
def test_libsvm_svm_train_through_command(tmp_path):
    out = _cli(["check-solver", "--family", "SVM", "--n", "6", "--param",
                "fit_intercept=true", "--param", "C=1", "--scales", "unit,duplicates,small",
                "--out-name", "model", "--command",
                "svm-train -s 0 -t 0 -c {C} -e 1e-10 -q {data} {out}"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
