"""The executable derivations (refmodels.derive): every family's walk-through runs, every
step carries a check that passes, every erratum's printed version fails beside its
correction, each erratum appears in exactly one walk-through, and the checks can fail."""
import argparse
import importlib

import numpy as np
import pytest

# the module (``refmodels.derive`` as a package attribute may be the function derive)
D = importlib.import_module("refmodels.derive")

FAMILIES = list(D.FAMILIES)


@pytest.fixture(scope="module")
def walkthroughs():
    return {f: D.derive(f, seed=0) for f in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_walkthrough_holds(walkthroughs, family):
    wt = walkthroughs[family]
    assert len(wt.steps) >= 5
    titles = " ".join(s.title.lower() for s in wt.steps)
    for word in ("primal", "dual", "solver step"):
        assert word in titles, (family, word)
    for step in wt.steps:
        assert step.checks or step.errata, f"{family}: step {step.title!r} has no check"
        assert step.source.strip() and step.unicode.strip() and step.latex.strip()
        for c in step.checks:
            assert c.passed, f"{family} / {step.title}: {c.line()}"
        for e in step.errata:
            assert not e.printed.passed, f"{family}: printed version of {e.key} passes"
            assert e.corrected.passed, f"{family}: corrected version of {e.key} fails"
            assert np.isfinite(e.corrected.residual)
    assert wt.ok


def test_every_erratum_in_exactly_one_walkthrough(walkthroughs):
    seen = {}
    for f, wt in walkthroughs.items():
        for e in wt.errata:
            assert e.key not in seen, f"{e.key} in both {seen[e.key]} and {f}"
            seen[e.key] = f
    assert seen == D.ERRATA


@pytest.mark.parametrize("family", FAMILIES)
def test_checks_can_fail(walkthroughs, family):
    """Every check compares two computed quantities: moving one by 0.1 % makes it fail."""
    for c in walkthroughs[family].checks:
        if c.kind == "eq":
            assert c.perturbed(1e-3) > c.tol, f"{family}: {c.what} does not notice a 0.1 % error"
        else:   # an inequality lhs <= rhs: it fails once lhs is above rhs
            moved = D.Check(c.what, np.asarray(c.rhs, float) + 0.1 * (1 + np.abs(c.rhs)), c.rhs,
                            c.tol, kind="le")
            assert not moved.passed


def test_erratum_residuals_are_shown(walkthroughs):
    text = str(walkthroughs["McODM"])
    assert text.count("ERRATUM") == 3
    assert "fails, as it should" in text
    assert "!! the printed version should fail" not in text


def test_renderings(walkthroughs):
    wt = walkthroughs["ODML"]
    md, rst, tex, txt = wt.to_markdown(), wt.to_rst(), wt.to_latex(), str(wt)
    for s in wt.steps:
        assert s.title in md and s.title in rst and s.title in txt
    assert "$$" in md and ".. math::" in rst and r"\begin{gather*}" in tex
    assert "Erratum" in md and "admonition" in rst and r"\paragraph{Erratum" in tex
    assert "Zhang" in md and "Zhou" in rst         # full citations
    assert D.derive("SVM", latex=True).startswith(r"\section*")


def test_block_solver_by_sorting_against_cvxpy():
    """mcODM's block QP (seed 002 eq. 24): sorting = CVXPY in both cases (beta = 0, > 0);
    Alg. 4 as printed is wrong on most random blocks."""
    rng = np.random.default_rng(5)
    n_case, wrong = {True: 0, False: 0}, 0
    for t in range(12):
        A = 0.3 + rng.random()
        B = rng.normal(size=5)
        Dd, E = A + 0.2 + rng.random(), A + 0.2 + rng.random()
        F = rng.normal() + (2.0 if t % 2 else -2.0)
        y = int(rng.integers(5))
        a, b = D.mcodm_block_sort(A, B, Dd, E, F, y)
        ca, cb = D._block_cvxpy(A, B, Dd, E, F, y)
        np.testing.assert_allclose(np.r_[a, b], np.r_[ca, cb], atol=1e-6)
        n_case[b > 0] += 1
        pa, pb = D.mcodm_block_alg4_printed(A, B, Dd, E, F, y)
        wrong += not np.allclose(np.r_[pa, pb], np.r_[ca, cb], atol=1e-6)
    assert min(n_case.values()) >= 3 and wrong >= 8


def test_smo_step_and_reduced_gradient():
    rng = np.random.default_rng(2)
    m = 6
    X = rng.normal(size=(m, 2))
    G = X @ X.T + np.eye(m)
    y = np.array([1, -1, 1, -1, 1, -1.0])
    idx, s = np.r_[np.arange(m), np.arange(m)], np.r_[y, -y]
    c, up = np.r_[-np.ones(m), 1.3 * np.ones(m)], np.r_[np.ones(m), 0.5 * np.ones(m)]
    u = np.zeros(2 * m)
    u[0] = u[1] = 0.4
    u2 = D.smo_pair_step(u, s, c, up, G, idx, 0, 1)
    v0, v2 = np.zeros(m), np.zeros(m)
    np.add.at(v0, idx, s * u)
    np.add.at(v2, idx, s * u2)
    assert abs(v2.sum() - v0.sum()) < 1e-12                     # keeps e^T v
    assert np.all(u2 >= -1e-15) and np.all(u2 <= up + 1e-15)     # stays in the box
    obj = lambda u_, v_: 0.5 * v_ @ G @ v_ + c @ u_             # noqa: E731
    assert obj(u2, v2) < obj(u, v0)                               # descends
    Dd = D.reduced_gradient_direction([0.7, 0.3, 0.0], [-2.0, -1.0, 0.5])
    assert abs(Dd.sum()) < 1e-15 and Dd[2] == 0.0 and np.dot([-2.0, -1.0, 0.5], Dd) < 0


def test_bad_input():
    with pytest.raises(ValueError, match="family"):
        D.derive("NoSuchModel")
    with pytest.raises(ValueError, match="seed"):
        D.derive("SVM", seed=-1)
    assert D._family("epssvm") == "SVMm" and D._family("drm") == "DRR" \
        and D._family("EpsMKL") == "MKLm" and D._family("odm") == "ODM"


def test_cli_entry_points(capsys):
    parser = argparse.ArgumentParser(prog="refmodels")
    sub = parser.add_subparsers(dest="command", required=True)
    D.add_parser(sub)
    args = parser.parse_args(["derive", "svm", "--seed", "1"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "Soft-margin SVM" in out and "PASS" in out and "FAIL" not in out.split("checks pass")[0]
    args = parser.parse_args(["derive", "SVM", "--latex"])
    assert D.run(args) == 0
    assert r"\subsection*" in capsys.readouterr().out


def test_function_and_module_both_serve():
    """``rm.derive`` is the function (or, before the package binds it, the callable module):
    both can be called, and both carry the command-line hooks."""
    assert D.derive.add_parser is D.add_parser and D.derive.run is D.run
    assert callable(D)
    import refmodels as rm
    f = getattr(rm, "derive", D)
    assert callable(f) and hasattr(f, "add_parser") and hasattr(f, "run")
