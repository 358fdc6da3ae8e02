"""The scikit-learn estimators: scikit-learn's own checks, pipelines, search, accuracy."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import fast

BINARY = [fast.SVMClassifier, fast.ODMLClassifier, fast.LDMClassifier, fast.ODMClassifier,
          fast.SVMmClassifier]


def _instances():
    out = []
    for cls in BINARY:
        out.append(cls())                       # the default kernel is "rbf"
        out.append(cls(kernel="linear"))
    out.append(fast.SVMClassifier(fit_intercept=False))
    out += [fast.McODMClassifier(), fast.McODMClassifier(kernel="linear")]
    out += [fast.DRMClassifier(), fast.DRRClassifier(q=2, r=1, rho="identity")]
    out += [fast.MKLmClassifier()]
    return out


@parametrize_with_checks(_instances())
def test_sklearn_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls", BINARY)
def test_pipeline_grid_search_and_accuracy(cls):
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), cls(kernel="linear"))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.93, scores
    Xw, yw = load_wine(return_X_y=True)
    scores = cross_val_score(make_pipeline(StandardScaler(), cls(kernel="rbf")), Xw, yw, cv=3)
    assert scores.mean() > 0.9, scores
    first = next(iter(cls._hyper))
    search = GridSearchCV(make_pipeline(StandardScaler(), cls(kernel="linear")),
                          {f"{cls.__name__.lower()}__{first}": [0.5, 2.0]}, cv=2)
    search.fit(Xw, yw)
    assert search.best_score_ > 0.85


@pytest.mark.parametrize("cls", BINARY)
def test_estimator_solutions_certify(cls):
    """The estimator's numbers are SPEC's: each binary problem's solution certifies."""
    import refmodels as rm

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::3]
    y = y[::3]
    assert cls._problem_class is getattr(rm, cls._problem_class.__name__)
    clf = cls().fit(X, y)                                   # one-vs-one: one problem per pair
    assert clf.pairs_.tolist() == [[0, 1], [0, 2], [1, 2]]
    for (i, j), sol in zip(clf.pairs_, clf.solutions_):
        rows = np.isin(y, clf.classes_[[i, j]])
        prob = cls._problem_class(X[rows], np.where(y[rows] == clf.classes_[j], 1, -1),
                                  kernel=clf.kernel_, **clf._problem_kwargs(m=rows.sum()))
        cert = prob.certify(sol)
        assert cert.ok, str(cert)
    clf = cls(multi_class="ovr").fit(X, y)                  # one-vs-rest: one per class
    assert clf.pairs_.shape == (0, 2)
    for c, sol in zip(clf.classes_, clf.solutions_):
        prob = cls._problem_class(X, np.where(y == c, 1, -1), kernel=clf.kernel_,
                                  **clf._problem_kwargs())
        cert = prob.certify(sol)
        assert cert.ok, str(cert)


def test_bad_hyperparameter_is_a_value_error():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="C"):
        fast.SVMClassifier(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="theta"):
        fast.ODMClassifier(theta=1.0).fit(X, y)


def test_mcodm_classifier_accuracy_and_search():
    from sklearn.datasets import load_digits

    X, y = load_wine(return_X_y=True)
    scores = cross_val_score(make_pipeline(StandardScaler(), fast.McODMClassifier(kernel="rbf")),
                             X, y, cv=3)
    assert scores.mean() > 0.93, scores
    # digits: compared with SVC's default on the same folds (SVC gets 0.956 here)
    from sklearn.svm import SVC

    Xd, yd = load_digits(return_X_y=True)
    ours = cross_val_score(make_pipeline(StandardScaler(), fast.McODMClassifier(kernel="rbf")),
                           Xd, yd, cv=3).mean()
    svc = cross_val_score(make_pipeline(StandardScaler(), SVC()), Xd, yd, cv=3).mean()
    assert ours > svc - 0.07, (ours, svc)
    search = GridSearchCV(make_pipeline(StandardScaler(), fast.McODMClassifier(kernel="linear")),
                          {"mcodmclassifier__lam": [0.5, 4.0]}, cv=2).fit(X, y)
    assert search.best_score_ > 0.85


class _ElasticNet:
    """A user's regularizer, written here and not in the package: ||w||_1 + 1/2 ||w||^2."""

    def expr(self, w, groups):
        import cvxpy as cp

        return cp.norm1(w) + 0.5 * cp.sum_squares(w)

    def value(self, w, groups):
        return float(np.sum(np.abs(w)) + 0.5 * np.sum(w * w))

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - step, 0.0) / (1.0 + step)


def test_drm_drr_classifiers_accuracy_search_and_user_regularizer():
    from sklearn.datasets import load_digits

    X, y = load_wine(return_X_y=True)
    assert cross_val_score(make_pipeline(StandardScaler(), fast.DRMClassifier()), X, y,
                           cv=3).mean() > 0.95
    Xd, yd = load_digits(return_X_y=True)
    assert cross_val_score(make_pipeline(StandardScaler(), fast.DRMClassifier()), Xd, yd,
                           cv=3).mean() > 0.93
    # a user's regularizer, cross-validated like any estimator
    from refmodels.regularizers import Regularizer

    class Elastic(_ElasticNet, Regularizer):
        pass

    search = GridSearchCV(make_pipeline(StandardScaler(), fast.DRRClassifier(regularizer=Elastic())),
                          {"drrclassifier__beta": [0.1, 1.0]}, cv=2).fit(X[::2], y[::2])
    assert search.best_score_ > 0.85
    # the estimator's problem and solution certify
    clf = make_pipeline(StandardScaler(), fast.DRRClassifier(q=2, r=1, rho="identity")).fit(X, y)
    Xs = clf[0].transform(X[:5])
    prob, sol = clf[-1].solve(Xs)
    assert prob.certify(sol).ok


def test_mklm_classifier_accuracy_weights_and_callable_kernel():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = load_breast_cancer(return_X_y=True)
    clf = make_pipeline(StandardScaler(), fast.MKLmClassifier(
        kernels=["linear", ("rbf", {"gamma": 0.05}), lambda A, B: rbf_kernel(A, B, gamma=0.5)]))
    assert cross_val_score(clf, X, y, cv=3).mean() > 0.93
    clf.fit(X, y)
    mu = clf[-1].mu_
    assert mu.shape == (1, 3) and np.all(mu >= -1e-12) and abs(mu.sum() - 1) < 1e-9
    Xw, yw = load_wine(return_X_y=True)
    scores = cross_val_score(make_pipeline(StandardScaler(), fast.MKLmClassifier()), Xw, yw, cv=3)
    assert scores.mean() > 0.9
    with pytest.raises(ValueError, match="kernels"):
        fast.MKLmClassifier(kernels=["sigmoid"]).fit(Xw, yw)


ALL = [fast.SVMClassifier, fast.ODMLClassifier, fast.LDMClassifier, fast.ODMClassifier,
       fast.SVMmClassifier, fast.McODMClassifier, fast.MKLmClassifier, fast.DRRClassifier,
       fast.DRMClassifier]


@pytest.mark.parametrize("cls", ALL)
def test_estimators_share_one_base_and_name_their_problem_class(cls):
    import inspect

    import refmodels as rm
    from fast.estimators import BaseMarginClassifier

    assert issubclass(cls, BaseMarginClassifier)
    assert cls._problem_class is getattr(rm, cls._problem_class.__name__)
    # scikit-learn's rule: the signature written out, every parameter stored as given
    sig = inspect.signature(cls.__init__).parameters
    params = [p for p in sig if p != "self"]
    assert cls().get_params() == {p: sig[p].default for p in params}
    assert set(cls._parameter_constraints) == set(params)


@pytest.mark.parametrize("cls", ALL)
def test_numpydoc_one_entry_per_parameter(cls):
    """Parameters documented one per entry, in signature order, with the numpydoc sections."""
    import inspect

    docscrape = pytest.importorskip("numpydoc.docscrape")
    validate = pytest.importorskip("numpydoc.validate")
    doc = docscrape.ClassDoc(cls)
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    assert [p.name for p in doc["Parameters"]] == params
    for p in doc["Parameters"]:
        assert p.type and "".join(p.desc).strip(), p.name
    for section in ("Attributes", "See Also", "References", "Examples"):
        assert doc[section], section
    assert "Teng Zhang" in str(doc) or "Do and" in str(doc) or "Peng" in str(doc) \
        or "Cortes" in str(doc)
    errors = validate.validate(f"fast.estimators.{cls.__name__}")["errors"]
    wanted = {"PR01", "PR02", "PR03", "PR04", "PR09", "SS06", "GL03", "GL07"}
    assert not [e for e in errors if e[0] in wanted], errors


def test_svm_intercept_defaults_differ_for_a_documented_reason():
    import inspect

    import refmodels as rm

    assert inspect.signature(rm.SVM.__init__).parameters["fit_intercept"].default is False
    assert inspect.signature(fast.SVMClassifier.__init__).parameters["fit_intercept"].default
    doc = " ".join(fast.SVMClassifier.__doc__.split())
    assert "canonical SVM" in doc and "follows ``SVC``" in doc



# ---- certify a fitted estimator, ties, ODM's method, McODM's outer loop --------------------
CERTIFIED = BINARY + [fast.McODMClassifier, fast.MKLmClassifier]


@pytest.mark.parametrize("cls", CERTIFIED)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_certify_holds_after_fit_and_fails_when_tampered(cls, n_classes):
    import dataclasses

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = np.isin(y, np.arange(n_classes))
    X, y = X[keep][::3], y[keep][::3]
    clf = cls().fit(X, y)
    n_problems = 1 if (n_classes == 2 or cls is fast.McODMClassifier) else n_classes
    assert len(clf.problems_) == len(clf.solutions_) == n_problems
    certs = clf.certify()
    assert len(certs) == n_problems and all(c.ok for c in certs), [str(c) for c in certs]
    # against the training data given again: the same problems
    assert all(c.ok for c in clf.certify(X, y))
    # refits nothing: the stored solutions are the ones certified
    sols = list(clf.solutions_)
    clf.certify()
    assert all(a is b for a, b in zip(sols, clf.solutions_))
    # a tampered solution fails
    sol = clf.solutions_[-1]
    clf.solutions_[-1] = dataclasses.replace(sol, coef=np.asarray(sol.coef) * 1.5)
    assert not clf.certify()[-1].ok
    # other data than the training data: the solutions are not optimal for it
    clf.solutions_[-1] = sol
    assert not all(c.ok for c in clf.certify(X[::-1] * 0.5, y[::-1]))
    with pytest.raises(ValueError, match="both X and y"):
        clf.certify(X)


def test_drr_certify_takes_the_test_points():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = fast.DRMClassifier().fit(X, y)
    assert clf.certify(X[:7])[0].ok
    with pytest.raises(ValueError, match="transductive"):
        clf.certify()


@pytest.mark.parametrize("cls", BINARY + [fast.MKLmClassifier])
def test_ties_binary_zero_score_gives_classes_1_and_multiclass_smallest_index(cls):
    """One rule: a binary score of exactly 0 goes to the positive class, equal largest
    values of decision_function (one-vs-one: votes, then summed pair scores) to the
    smallest class index; predict is decision_function's argmax."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::3]
    y = y[::3]
    two = cls().fit(X[y < 2], np.where(y[y < 2] == 1, "b", "a"))
    two.dual_coef_[:] = 0.0
    two.intercept_[:] = 0.0
    if hasattr(two, "coef_"):
        two.coef_[:] = 0.0
    assert np.all(two.decision_function(X) == 0)
    assert np.all(two.predict(X) == "b")                       # a score of 0 -> classes_[1]
    three = cls(multi_class="ovr").fit(X, y)
    three.dual_coef_[:] = 0.0
    three.intercept_[:] = 0.0
    if hasattr(three, "coef_"):
        three.coef_[:] = 0.0
    assert np.all(three.predict(X) == three.classes_[0])      # equal scores -> smallest index
    three.intercept_[1:] = 1.0                                  # classes 1 and 2 tie on top
    assert np.all(three.predict(X) == three.classes_[1])
    # one-vs-one, pairs (0, 1), (0, 2), (1, 2): a zero pair score votes for j
    ovo = cls().fit(X, y)
    ovo.dual_coef_[:] = 0.0
    ovo.intercept_[:] = 0.0
    if hasattr(ovo, "coef_"):
        ovo.coef_[:] = 0.0
    assert np.all(ovo.predict(X) == ovo.classes_[2])           # votes 0, 1, 2
    # a cycle (0 beats 1, 1 beats 2, 2 beats 0): votes 1, 1, 1, then the summed pair scores
    ovo.intercept_[:] = [-1.0, 1.0, -2.0]                        # sums 0, 1, -1
    assert np.all(ovo.predict(X) == ovo.classes_[1])
    ovo.intercept_[:] = [-1.0, 1.0, -1.0]                        # sums 0, 0, 0
    assert np.all(ovo.predict(X) == ovo.classes_[0])           # then the smallest index
    ovo.intercept_[:] = [1.0, 1.0, -1.0]                         # votes 0, 2, 1
    assert np.all(ovo.predict(X) == ovo.classes_[1])
    for clf in (three, ovo):
        np.testing.assert_array_equal(
            clf.predict(X), clf.classes_[np.argmax(clf.decision_function(X), axis=1)])
    doc = " ".join(cls.predict.__doc__.split())
    assert "exactly 0 gives ``classes_[1]``" in doc and "larger summed pair score" in doc


def test_ties_mcodm_and_drr_rules():
    from fast.estimators.drr import _argmin_ties

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::3]
    y = y[::3]
    mc = fast.McODMClassifier().fit(X, y)
    mc.dual_coef_[:] = 0.0
    assert np.all(mc.predict(X) == mc.classes_[0])
    assert "smallest class index" in " ".join(fast.McODMClassifier.predict.__doc__.split())
    # DRR/DRM: delta equal within a relative 1e-12 are ties, to the smallest class index
    d = np.array([[5.0, 5.0 * (1 - 1e-14), 7.0], [3.0, 2.0, 2.0 + 1e-15], [1.0, 1.0 - 1e-6, 1.0]])
    np.testing.assert_array_equal(_argmin_ties(d), [0, 1, 1])
    for cls in (fast.DRRClassifier, fast.DRMClassifier):
        assert "relative ``1e-12``" in " ".join(cls.predict.__doc__.split())
    # two solutions of the same problem that differ in the last bits predict the same
    clf = fast.DRMClassifier().fit(X, y)
    prob, sol = clf.solve(X[:20])
    delta = prob.dissimilarities(sol)
    np.testing.assert_array_equal(_argmin_ties(delta), _argmin_ties(delta * (1 + 1e-13)))
    np.testing.assert_array_equal(clf.predict(X[:20]), clf.classes_[_argmin_ties(delta)])


def test_odm_method_parameter():
    import fast.odm

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::4]
    y = y[::4]
    assert set(fast.ODMClassifier._parameter_constraints["method"][0].options) \
        == set(fast.odm.SOLVERS.names)
    base = fast.ODMClassifier(kernel="linear").fit(X, y)
    for method in ("tron", "auto", "dcd"):
        clf = fast.ODMClassifier(kernel="linear", method=method).fit(X, y)
        assert clf.certify()[0].ok
        np.testing.assert_allclose(clf.coef_, base.coef_, rtol=1e-4, atol=1e-6)
    # None is fast.solve's default, "auto": TRON on the linear kernel; "dcd" is
    # still there by name
    assert base.solutions_[0].solver == "fast:tron"
    assert fast.ODMClassifier(kernel="linear", method="dcd").fit(X, y).solutions_[0].solver \
        == "fast:dcd"
    with pytest.raises(ValueError, match="method"):
        fast.ODMClassifier(method="nope").fit(X, y)


def test_problem_alias_removed():
    from fast.estimators import BaseMarginClassifier

    assert not hasattr(BaseMarginClassifier, "_problem")
    assert not hasattr(fast.ODMClassifier, "_problem")


def test_mcodm_outer_loop_exposed_and_warning_says_why():
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = fast.McODMClassifier().fit(X, y)
    assert clf.n_outer_ == clf.outer_changes_.size == clf.n_iter_
    assert clf.outer_changes_[-1] < 1e-6                       # converged on wine
    with pytest.warns(ConvergenceWarning, match="not a descent method"):
        short = fast.McODMClassifier(max_outer=1, kernel="linear").fit(X, y)
    assert short.n_outer_ == 1 and short.outer_changes_.size == 1


def test_defaults_documented_with_measurements():
    for cls in ALL:
        doc = " ".join(cls.__doc__.split())
        assert "bench_defaults.py" in doc, cls.__name__


def test_mcodm_warning_tells_slow_convergence_from_a_cycle():
    from fast.estimators.mcodm import _why_not_converged

    slow = _why_not_converged(1e-3 * 0.8 ** np.arange(50), 1e-6)
    assert "linear convergence" in slow and "raise max_outer" in slow
    cycle = _why_not_converged(np.array([1.2, 1.16, 1.17, 1.16, 1.16, 1.17]), 1e-6)
    assert "cycle" in cycle and "linear" not in cycle


# ---- one-vs-one beyond two classes, as SVC -----------------------------------------------------
def test_one_vs_one_matches_svc_and_resolves_gamma_once():
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    from fast.estimators._base import ovo_votes

    X, y = load_digits(return_X_y=True)
    X, y = X[::4] / 16.0, y[::4]
    svc = SVC(tol=1e-10, break_ties=True).fit(X, y)
    ours = fast.SVMClassifier(tol=1e-8).fit(X, y)
    assert len(ours.problems_) == 45 and ours.pairs_.shape == (45, 2)
    # the same 45 pair problems (our sign: positive means the pair's second class)
    svc.decision_function_shape = "ovo"
    pair = ours._raw_scores(X) + ours.intercept_
    np.testing.assert_allclose(pair, -svc.decision_function(X), atol=1e-5)
    svc.decision_function_shape = "ovr"
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    # gamma="scale" of all the training data, not of a pair's samples
    assert ours.kernel_.gamma == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert all(p.kernel.gamma == ours.kernel_.gamma for p in ours.problems_)
    # each pair holds the samples of its two classes only; dual_coef_ is zero elsewhere
    for (i, j), prob, row in zip(ours.pairs_, ours.problems_, ours.dual_coef_):
        held = np.isin(y, ours.classes_[[i, j]])
        assert prob.X.shape[0] == held.sum()
        assert not np.any(row[~held])
    # the vote: a pair score >= 0 votes for its second class
    s = np.array([[0.0, -2.0, 5.0]])
    np.testing.assert_allclose(ovo_votes(s, [(0, 1), (0, 2), (1, 2)], 3),
                               [[1 + 2 / 9, 1 - 5 / 18, 1 + 3 / 12]])


@pytest.mark.parametrize("cls", [fast.ODMLClassifier, fast.ODMClassifier])
def test_one_vs_one_lam_none_is_each_pairs_sample_count(cls):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = cls().fit(X, y)
    for (i, j), prob in zip(clf.pairs_, clf.problems_):
        assert prob.lam == np.isin(y, clf.classes_[[i, j]]).sum()


def test_multi_class_parameter():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="multi_class"):
        fast.SVMClassifier(multi_class="crammer_singer").fit(X, y)
    for cls in BINARY + [fast.MKLmClassifier]:
        assert cls().multi_class == "ovo"
        assert "multi_class" in fast.ODMClassifierCV._base._parameter_constraints
    Xb, yb = X[y < 2], y[y < 2]                              # two classes: no difference
    a = fast.SVMClassifier().fit(Xb, yb)
    b = fast.SVMClassifier(multi_class="ovr").fit(Xb, yb)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.pairs_.shape == (0, 2)
    import refmodels as rm

    # its problems_ (one per pair) and their points, as a ProblemSet
    probs, sols = rm.from_sklearn(fast.SVMClassifier().fit(X, y), X, y)
    assert len(probs) == 3 and probs.scheme == "ovo" and probs.certify(sols).ok
