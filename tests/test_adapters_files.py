"""Model-file readers (``refmodels.formats``) against the real libraries: LIBSVM and
LIBLINEAR (the ``libsvm-official`` / ``liblinear-official`` packages, extra ``formats``;
skipped without them) and LIBODM (model files it wrote, in tests/data/libodm; LIBODM is not
a package). On five real data sets: a converged model certifies and an early-stopped one
fails, at the same tolerance. The scikit-learn and ``fast`` adapters: tests/test_adapters.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler

import refmodels as rm
from adapter_data import DATASETS, TOL, _one_blas_thread, data, fit, pm1  # noqa: F401
from refmodels import formats


# ---- model files --------------------------------------------------------------------------------
def _libsvm():
    return pytest.importorskip("libsvm.svmutil")


def _liblinear():
    return pytest.importorskip("liblinear.liblinearutil")


@pytest.mark.parametrize("dataset", DATASETS)
def test_libsvm_model_files(dataset, tmp_path):
    svmutil = _libsvm()
    X, y = data(dataset)
    yl = pm1(y) * 3 + 4                      # labels 1 and 7, in the file's first-seen order
    gamma = 1.0 / X.shape[1]
    for opts, ok in ((f"-c 1 -t 2 -g {gamma!r} -e 1e-10 -q", True),
                     (f"-c 1 -t 2 -g {gamma!r} -e 0.5 -q", False)):
        path = str(tmp_path / "svm.model")
        svmutil.svm_save_model(path, svmutil.svm_train(yl, sp.csr_matrix(X), opts))
        info = formats.model_info(path, "libsvm")
        assert info["kernel"] == rm.kernels.RBF(gamma=gamma) and info["fit_intercept"]
        prob = rm.SVM(X, yl, C=1.0, kernel=info["kernel"], fit_intercept=True)
        sol = prob.solution_from(**formats.load_model(path, "libsvm", X, yl))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts


def test_libsvm_model_with_points_repeated_under_both_labels(tmp_path):
    """Real sets repeat a point under both labels (haberman does): each copy is a support
    vector at its bound, and the file's SV must go to the row of its own label (matching by
    features alone gave one row the other label's coefficient: a dual outside its box)."""
    svmutil = _libsvm()
    X, y = data("heart")
    y = pm1(y)
    i, j = np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]
    X = np.vstack([X, X[i], X[j]])                 # X[i] now also with -1, X[j] also with +1
    y = np.concatenate([y, [-1.0, 1.0]])
    for order in (np.arange(len(y)), np.arange(len(y))[::-1]):
        Xo, yo = X[order], y[order]
        path = str(tmp_path / "dup.model")
        svmutil.svm_save_model(path, svmutil.svm_train(
            yo, sp.csr_matrix(Xo), f"-c 1 -t 2 -g {1.0 / X.shape[1]!r} -e 1e-10 -q"))
        prob = rm.SVM(Xo, yo, C=1.0, kernel=formats.model_info(path, "libsvm")["kernel"],
                      fit_intercept=True)
        sol = prob.solution_from(**formats.load_model(path, "libsvm", Xo, yo))
        assert np.all(sol.variables["alpha"] >= 0) and np.all(sol.variables["alpha"] <= 1.0)
        assert prob.certify(sol, tol=TOL, reference=False).ok


def test_libsvm_nu_svc_linear_and_precomputed(tmp_path):
    svmutil = _libsvm()
    X, y = data("heart")
    y = pm1(y)
    path = str(tmp_path / "nu.model")
    svmutil.svm_save_model(path, svmutil.svm_train(y, sp.csr_matrix(X),
                                                   "-s 1 -n 0.5 -t 0 -e 1e-10 -q"))
    info = formats.model_info(path, "libsvm")
    prob = rm.SVM(X, y, C=info["C"], fit_intercept=True)
    assert prob.certify(prob.solution_from(**formats.load_model(path, "libsvm", X, y)),
                        tol=TOL, reference=False).ok
    with pytest.raises(ValueError, match="matches no"):
        formats.load_model(path, "libsvm", X + 1.0, y)
    with pytest.raises(ValueError, match="labels"):
        formats.load_model(path, "libsvm", X, y + 5)
    # kernel_type precomputed: SV lines are "coef 0:k" with k the 1-based training index
    G = X @ X.T
    Gk = np.hstack([np.arange(1, X.shape[0] + 1)[:, None], G])
    path = str(tmp_path / "pre.model")
    svmutil.svm_save_model(path, svmutil.svm_train(y, Gk, "-t 4 -c 0.5 -e 1e-10 -q"))
    prob = rm.SVM(G, y, C=0.5, kernel=formats.model_info(path, "libsvm")["kernel"],
                  fit_intercept=True)
    assert prob.certify(prob.solution_from(**formats.load_model(path, "libsvm", G, y)),
                        tol=TOL, reference=False).ok


#: C per data set: the hinge problem is not trivial (not every alpha at C) and LIBLINEAR's
#: dual CD meets -e 1e-10 within its hard-coded 1000 passes.
LIBLINEAR_C = {"breast_cancer": 0.03, "iris": 0.1, "wine": 0.1, "digits": 0.01, "heart": 0.03}


def _seed_libc():
    """LIBLINEAR permutes with libc's rand(), never reseeded: seed it so a run is repeatable."""
    try:
        import ctypes

        ctypes.CDLL(None).srand(1)
    except (OSError, AttributeError):        # not glibc: the runs are merely not repeatable
        pass


@pytest.mark.parametrize("dataset", DATASETS)
def test_liblinear_model_files(dataset, tmp_path):
    liblinearutil = _liblinear()
    X, y = data(dataset)
    X = MinMaxScaler().fit_transform(X)
    C = LIBLINEAR_C[dataset]
    path = str(tmp_path / "lin.model")
    for bias in (None, 1.0):
        for eps, ok in ((1e-10, True), (2.0, False)):
            opts = f"-s 3 -c {C} -e {eps} -q" + ("" if bias is None else f" -B {bias}")
            _seed_libc()
            liblinearutil.save_model(path, liblinearutil.train(y.astype(float), sp.csr_matrix(X),
                                                               opts))
            info = formats.model_info(path, "liblinear")
            assert info["bias"] == bias
            Xa = X if bias is None else formats.augment(X, bias)
            prob = rm.SVM(Xa, y, C=C)
            sol = prob.solution_from(**formats.load_model(path, "liblinear", Xa, y))
            assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts
    with pytest.raises(ValueError, match="augment"):
        formats.load_model(path, "liblinear", X, y)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("solver", [1, 2])
def test_liblinear_squared_hinge_model_files(dataset, solver, tmp_path):
    """LIBLINEAR -s 1 (dual CD) and -s 2 (primal trust region), the squared hinge: ODM at
    theta = mu = 0 with lam = C m, the -B bias feature as fit_intercept on X itself (or
    ODM without intercept on augment(X, B)). Converged files certify; files stopped early
    (-e large) fail; -R (an unregularized bias, not recorded in the file) fails."""
    liblinearutil = _liblinear()
    X, y = data(dataset)
    X = MinMaxScaler().fit_transform(X)
    m, C = X.shape[0], 0.5
    path = str(tmp_path / "l2.model")
    loose = 1.0 if solver == 1 else 0.5
    for bias, eps, extra, ok in ((None, 1e-12, "", True), (2.0, 1e-12, "", True),
                                 (1.0, loose, "", False), (1.0, 1e-12, " -R", False)):
        if extra and solver == 1:
            continue                     # -R is a primal option (LIBLINEAR refuses -s 1 -R)
        opts = f"-s {solver} -c {C} -e {eps} -q" + ("" if bias is None else f" -B {bias}")
        _seed_libc()
        liblinearutil.save_model(path, liblinearutil.train(y.astype(float), sp.csr_matrix(X),
                                                           opts + extra))
        info = formats.model_info(path, "liblinear")
        assert info["family"] == "ODM" and info["mu"] == 0.0 and info["theta"] == 0.0
        assert info["fit_intercept"] is (bias is not None)
        prob = rm.ODM(X, y, lam=C * m, mu=info["mu"], theta=info["theta"],
                      fit_intercept=info["fit_intercept"],
                      intercept_scaling=info["intercept_scaling"])
        sol = prob.solution_from(**formats.load_model(path, "liblinear", X, y))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts + extra
        if bias is not None:
            Xa = formats.augment(X, bias)
            plain = rm.ODM(Xa, y, lam=C * m, mu=0.0, theta=0.0)
            assert plain.certify(plain.solution_from(**formats.load_model(
                path, "liblinear", Xa, y)), tol=TOL, reference=False).ok is ok
    path = str(tmp_path / "lr.model")
    liblinearutil.save_model(path, liblinearutil.train(y.astype(float), X, "-s 0 -q"))
    with pytest.raises(ValueError, match="solver_type must be L2R_L1LOSS_SVC_DUAL"):
        formats.load_model(path, "liblinear", X, y)


def _write_libodm(path, X, coef=None, w=None, kernel_id=2, gamma=0.5):
    """A model file in LIBODM's save_model layout, from a point of refmodels.ODM: ``w`` on
    one line (linear kernel) or one line per non-zero coefficient, values with %.16g."""
    head = [f"instance {X.shape[0]}", f"feature {X.shape[1]}", "bias 0", "solver 0"]
    if w is not None:
        body = ["kernel 0", "w", " ".join(f"{v:.16g}" for v in w) + " "]
    else:
        nz = np.flatnonzero(coef)
        body = [f"kernel {kernel_id}", f"gamma {gamma:g}", f"total_sv {nz.size}", "sv"]
        for i in nz:
            feats = " ".join(f"{j + 1}:{v:.16g}" for j, v in enumerate(X[i]) if v != 0)
            body.append(f"{coef[i]:.16g} {feats} ")
    path.write_text("\n".join(head + body) + "\n")


@pytest.mark.parametrize("dataset", DATASETS)
def test_libodm_layout_round_trip(dataset, tmp_path):
    """LIBODM is not a package: files in its layout are written from fast.ODMClassifier points
    (converged, and stopped after one epoch): linear (``w``) on the five sets, kernel (SV
    lines matched to rows) on wine. See test_libodm_real_files for LIBODM's own files."""
    import fast

    X, y = data(dataset)
    t = pm1(y)
    path = tmp_path / "odm.model"
    kernels = ("linear", "rbf") if dataset == "wine" else ("linear",)
    for kernel in kernels:
        for max_iter, ok in ((None, True), (1, False)):
            est = fit(fast.ODMClassifier(lam=1.0, kernel=kernel, gamma=0.5, max_iter=max_iter,
                                         fit_intercept=False), X, t)
            if kernel == "linear":
                _write_libodm(path, X, w=est.coef_[0])
            else:
                _write_libodm(path, X, coef=est.dual_coef_[0], gamma=0.5)
            info = formats.model_info(str(path), "libodm")
            prob = rm.ODM(X, t, lam=est.lam, mu=est.mu, theta=est.theta, kernel=info["kernel"])
            sol = prob.solution_from(**formats.load_model(str(path), "libodm", X, t))
            cert = prob.certify(sol, tol=TOL, reference=False)
            if max_iter is None or not cert.ok:
                assert cert.ok is ok, (kernel, max_iter)
            else:    # the polish may finish within one epoch: then it is the optimum
                np.testing.assert_allclose(sol.objective, prob.solution_from(
                    coef=fit(fast.ODMClassifier(lam=1.0, kernel=kernel, gamma=0.5,
                                                fit_intercept=False), X, t)
                    .dual_coef_[0]).objective, rtol=1e-9)
    with pytest.raises(ValueError, match="-1/\\+1"):
        formats.load_model(str(path), "libodm", X, y + 5)


#: Model files written by LIBODM (version 200520) itself, kept as data (tests/data/libodm).
LIBODM_FILES = Path(__file__).parent / "data" / "libodm"


def test_libodm_real_files():
    """Model files written by LIBODM itself on iris (versicolor = -1, virginica = +1,
    MinMaxScaler), trained as ``libodm-train -s 0 -k 2 -g 2 -l 1 -m 0.5 -t 0.3 -e 1e-10``
    (converged, iris_rbf.model), the same with ``-e 2`` (stopped early, iris_rbf_loose.model)
    and ``-s 1 -k 0 -l 1 -m 0.5 -t 0.3 -e 1e-10 -b`` (trust region, linear, with LIBODM's
    bias feature, iris_linear_bias.model)."""
    X, y = data("iris")
    t = pm1(y)
    for name, ok in (("iris_rbf", True), ("iris_rbf_loose", False), ("iris_linear_bias", True)):
        path = str(LIBODM_FILES / f"{name}.model")
        info = formats.model_info(path, "libodm")
        Xa = X if info["bias"] is None else formats.augment(X, info["bias"])
        prob = rm.ODM(Xa, t, lam=1.0, mu=0.5, theta=0.3, kernel=info["kernel"])
        sol = prob.solution_from(**formats.load_model(path, "libodm", Xa, t))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, name
    # the linear -b model on X itself is ODM with fit_intercept=True (tests/test_intercept.py);
    # X with neither its columns nor the augmented ones is refused
    with pytest.raises(ValueError, match="augment"):
        formats.load_model(str(LIBODM_FILES / "iris_linear_bias.model"), "libodm", X[:, :3], t)


def test_format_argument_errors(tmp_path):
    X, y = data("wine")
    with pytest.raises(ValueError, match="fmt must be one of"):
        formats.load_model("x", "svmlight", X, y)
    with pytest.raises(ValueError, match="readable"):
        formats.load_model(str(tmp_path / "missing"), "libsvm", X, y)
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type epsilon_svr\nkernel_type rbf\nnr_class 2\ntotal_sv 0\nrho 0\nSV\n")
    with pytest.raises(ValueError, match="svm_type must be c_svc or nu_svc"):
        formats.load_model(str(bad), "libsvm", X, y)
    bad.write_text("svm_type\nkernel_type rbf\nnr_class 2\ntotal_sv 0\nrho 0\nSV\n")
    with pytest.raises(ValueError, match="header 'svm_type' has no value"):
        formats.load_model(str(bad), "libsvm", X, y)
