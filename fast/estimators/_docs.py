"""The documentation the estimators share, written once and composed into each docstring.

A docstring of :mod:`fast.estimators` (a class's, or one of its methods') may hold, on a
line of its own, a placeholder ``<<...>>`` that :func:`shared_doc` replaces when the class
is defined, so that ``help()``, numpydoc and Sphinx read the full text:

* ``<<kernel gamma tol:iterative ...>>``: the numpydoc entries of those parameters or
  attributes (:data:`ENTRIES`), one per name, in that order; ``name:variant`` picks one of
  the descriptions of a name that has several. A name of :data:`GROUPS` stands for its
  members (``<<multiclass_attributes n_iter_:smo>>``: the group, ``n_iter_``'s variant ``smo``).
  A parameter's default, in the entry's header, is read from the signature of
  ``__init__`` (in a class docstring).
* ``<<multiclass>>``, ``<<defaults breast_cancer=0.979 ...>>``: a paragraph of the Notes
  (:data:`PARAGRAPHS`), its fields given as ``key=value``.
* ``<<Attributes: ...>>``, the same entries under their section header: a section whose
  entries are all shared is one placeholder (where a class adds entries of its own, the
  header is written out and placeholders stand for the shared runs);
* ``<<Examples: DATASET THRESHOLD ESTIMATOR>>``: the Examples section: the data set (a
  ``sklearn.datasets`` loader), standardised in a pipeline, the estimator fitted and its
  training accuracy compared with the threshold.

What stays written out in each class is what is its own: the formulation, its
hyperparameters, its See Also, its Notes and References.
"""
from __future__ import annotations

import inspect
import re
import textwrap

_PRECOMPUTED = 'with ``kernel="precomputed"``'

#: numpydoc entries by name: ``name -> (type, {variant: description})``, the first variant
#: being the default; a description may be a pair ``(type, description)`` whose type
#: replaces the name's
ENTRIES = {
    # ---- parameters of __init__ ------------------------------------------------------------
    "kernel": ('{"linear", "rbf", "poly", "precomputed"}', {"": """\
The kernel, as in ``SVC``: ``"linear"`` is ``x^T z``, ``"rbf"`` is
``exp(-gamma ||x - z||^2)``, ``"poly"`` is ``(gamma x^T z + coef0)^degree``;
with ``"precomputed"``, ``X`` is the Gram matrix in ``fit`` and ``K(X, X_fit)``
in prediction."""}),
    "gamma": ('{"scale", "auto"} or float > 0', {"": """\
Kernel coefficient of ``"rbf"`` and ``"poly"``, as in ``SVC``: ``"scale"`` is
``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``."""}),
    "degree": ("int >= 1", {"": 'Degree of the ``"poly"`` kernel; ignored by the others.'}),
    "coef0": ("float >= 0",
              {"": 'Constant term of the ``"poly"`` kernel; ignored by the others.'}),
    "tol": ("float > 0 or None", {
        "": """\
Stopping tolerance of the solver. None is the solver's default, tight enough for
the returned point to certify at 1e-6 (``prob.certify(sol).ok``); a looser value is
the speed setting.""",
        "iterative": "Stopping tolerance of the iterative methods (None: their default).",
        "outer": """\
Stopping rule of the outer loop: the relative change of ``W`` between rounds
(None: 1e-6).""",
        "mkl": """\
Stopping tolerance on the MKL duality gap of the reduced gradient (None: the
solver's default)."""}),
    "max_iter": ("int >= 1 or None", {
        "dcd": """\
Iteration limit of the solver (epochs of the coordinate descent). None is a bound
by work; a solve that reaches it warns (``ConvergenceWarning``).""",
        "svm": """\
Iteration limit of the solver (epochs of the coordinate descent, iterations of the
SMO). None is a bound by work; a solve that reaches it warns
(``ConvergenceWarning``).""",
        "smo": """\
Iteration limit of the SMO. None is a bound by work; a solve that reaches it warns
(``ConvergenceWarning``).""",
        "iterative": "Iteration limit of the iterative methods (None: their default).",
        "outer": """\
Epochs of the block coordinate descent in each relaxed solve (None: the solver's
bound by work).""",
        "mkl": "Outer iterations of the reduced gradient (None: the solver's default)."}),
    "random_state": ("int >= 0, numpy.random.Generator, RandomState or None", {
        "dcd": "Seed of the coordinate descent's permutation of the points.",
        "smo": "Seed passed to the solver (the SMO's choice of pairs is deterministic).",
        "bcd": "Seed of the block coordinate descent's permutation of the points.",
        "unused": """\
Accepted for scikit-learn's conventions; the solver is deterministic and does not
use it."""}),
    "multi_class": ('{"ovo", "ovr"}', {"": """\
How more than two classes are handled (no effect on two). ``"ovo"``, one-vs-one as
``SVC``: one binary problem per pair of classes, on the samples of those two classes
(``n_classes (n_classes - 1) / 2`` problems), the prediction by vote. ``"ovr"``,
one-vs-rest as ``LinearSVC``: one problem per class against the rest, on all samples,
the prediction by the largest score. See the Notes and :meth:`predict`."""}),
    "fit_intercept": ("bool", {"bias": """\
Whether the decision function has an intercept: a constant feature
``intercept_scaling`` appended to every point, its weight ``w_b`` regularized like the
others (``LinearSVC``'s and LIBLINEAR's ``-B`` convention, LIBODM's ``-b``; the kernel
becomes ``k + s^2``); ``intercept_ = s w_b``. False is the seed's machine without
intercept. See the Notes.""", "drr": """\
Whether every point gets a constant feature ``intercept_scaling`` (the kernel becomes
``k + s^2``: :class:`refmodels.kernels.WithBias`), as the margin estimators'
``fit_intercept``: the class representations can then shift by a constant. False is the
seed's machine, which fell 4.6 points below ``SVC()`` on ionosphere (see the Notes)."""}),
    "intercept_scaling": ("float > 0", {"": """\
``s``, the value of the constant feature of ``fit_intercept`` (as ``LinearSVC``'s): a
larger ``s`` regularizes the intercept less."""}),
    "mu": ("float > 0", {"": "Weight of the loss above the margin band, relative to the loss "
                             "below it."}),
    "theta": ("float in [0, 1)", {"": "Half-width of the insensitive band around margin 1."}),
    "alpha": ("float >= 0", {"": "Weight of the within-class scatter ``1/2 w^T (H - B) w``."}),
    "C2": ("float >= 0", {"": "Weight of the band slacks ``eta`` (0 is the SVM with an "
                              "intercept).",
                          "mkl": "Weight of the band slacks (``C2 / 2`` in the primal)."}),
    # ---- parameters of the methods -------------------------------------------------------
    "X": ("{array-like, sparse matrix} of shape (n_samples, n_features) or "
          "(n_samples, n_samples)", {
              "fit": f"""\
Training vectors (CSR accepted with the linear kernel); the Gram matrix
{_PRECOMPUTED}.""",
              "fit_dense": ("array-like of shape (n_samples, n_features) or "
                            "(n_samples, n_samples)",
                            f"Training vectors; the Gram matrix {_PRECOMPUTED}."),
              "score": ("{array-like, sparse matrix} of shape (n_samples, n_features) or "
                        "(n_samples, n_samples_fit)",
                        f"Points to score; ``K(X, X_fit)`` {_PRECOMPUTED}."),
              "predict": ("{array-like, sparse matrix} of shape (n_samples, n_features) or "
                          "(n_samples, n_samples_fit)",
                          f"Points to classify; ``K(X, X_fit)`` {_PRECOMPUTED}."),
              "predict_dense": ("array-like of shape (n_samples, n_features) or "
                                "(n_samples, n_samples_fit)",
                                f"Points to classify; ``K(X, X_fit)`` {_PRECOMPUTED}."),
              "test": ("array-like of shape (n_samples, n_features) or "
                       "(n_samples, n_samples_fit)",
                       f"Test points; ``K(X, X_fit)`` {_PRECOMPUTED}."),
              "test_required": ("array-like of shape (n_samples, n_features) or "
                                "(n_samples, n_samples_fit)",
                                f"Test points (required); ``K(X, X_fit)`` {_PRECOMPUTED}.")}),
    "y": ("array-like of shape (n_samples,)", {"fit": "Class labels (two or more classes)."}),
    # ---- what the methods return ----------------------------------------------------------
    "self": ("object", {"": "The fitted estimator."}),
    "y_pred": ("ndarray of shape (n_samples,)", {"": "Predicted labels."}),
    # ---- attributes (no default in their header) --------------------------------------------
    "classes_": ("ndarray of shape (n_classes,)", {"": "The class labels."}),
    "dual_coef_": ("ndarray of shape (n_problems, n_samples)", {
        "": """\
Coefficients over the training points: ``f_p(x) = sum_i dual_coef_[p, i] k(x_i, x)``;
one row per problem of ``problems_`` (zero on the points a one-vs-one pair does not
hold).""",
        "b": """\
Coefficients over the training points: ``f_p(x) = sum_i dual_coef_[p, i] k(x_i, x)
+ intercept_[p]``; one row per problem of ``problems_`` (zero on the points a
one-vs-one pair does not hold).""",
        "mkl": """\
Coefficients over the training points:
``f_p(x) = sum_k mu_[p, k] sum_i dual_coef_[p, i] K_k(x_i, x) + intercept_[p]``;
one row per problem of ``problems_`` (zero on the points a one-vs-one pair does not
hold).""",
        "mcodm": ("ndarray of shape (n_classes, n_samples)", """\
Coefficients over the training points:
``s_l(x) = sum_i dual_coef_[l, i] k(x_i, x)``.""")}),
    "intercept_": ("ndarray of shape (n_problems,)", {
        "": "Zeros (the formulation has no intercept).",
        "b": "The intercepts ``b``.",
        "svm": "The intercepts (zeros with ``fit_intercept=False``).",
        "bias": """\
The intercepts ``s w_b`` of the bias feature (zeros with ``fit_intercept=False``):
``f_p(x) = sum_i dual_coef_[p, i] k(x_i, x) + intercept_[p]``."""}),
    "n_iter_": ("int or ndarray of shape (n_problems,)", {
        "": "Solver epochs, one per problem beyond two classes.",
        "smo": "Solver iterations, one per problem beyond two classes.",
        "svm": "Solver iterations (epochs), one per problem beyond two classes.",
        "mkl": "Outer iterations, one per problem beyond two classes.",
        "outer": ("int", "Rounds of the outer loop (as ``n_outer_``)."),
        "transductive": ("int", "1 (the optimisation runs at prediction).")}),
    "coef_": ("ndarray of shape (n_problems, n_features)",
              {"": "The weights ``w`` in input space; linear kernel only.",
               "mcodm": ("ndarray of shape (n_classes, n_features)",
                         "The weights ``w_l`` in input space; linear kernel only.")}),
    "pairs_": ("ndarray of shape (n_problems, 2) or (0, 2)", {"": """\
The class indices ``(i, j)`` of each one-vs-one problem (``classes_[j]`` is its +1),
in ``SVC``'s order ``(0, 1), (0, 2), ..., (1, 2), ...``; empty for two classes and
one-vs-rest."""}),
    "support_": ("ndarray of shape (n_support,)", {"": """\
Indices of the training points with a non-zero coefficient in some problem."""}),
    "problems_": ("list of refmodels problems", {
        "": """\
The binary problems solved: one for two classes; beyond two, one per pair of classes
in ``pairs_`` order (``multi_class="ovo"``, each on the samples of its two classes) or
one per class in ``classes_`` order (``"ovr"``).""",
        "mcodm": ("list of refmodels.McODM",
                  "The one problem solved (a list, as the binary estimators' several).")}),
    "solutions_": ("list of refmodels.Solution", {
        "": "The solution of each problem; :meth:`certify` certifies them.",
        "mcodm": "Its solution; :meth:`certify` certifies its relaxed QP."}),
    "kernel_": ("refmodels.kernels.Kernel", {"": "The kernel object, with ``gamma`` resolved."}),
    "X_fit_": ("ndarray or sparse matrix of shape (n_samples, n_features) or None", {
        "": f"The training points (None {_PRECOMPUTED}).",
        "dense": ("ndarray of shape (n_samples, n_features)", "The training points."),
        "transductive": ("ndarray of shape (n_samples, n_features)",
                         f"The training points (the Gram matrix {_PRECOMPUTED}).")}),
    "y_fit_": ("ndarray of shape (n_samples,)", {"": "The training labels."}),
    "shape_fit_": ("tuple of int", {"": "Shape of the training ``X``."}),
    "n_features_in_": ("int", {"": "Number of features seen during ``fit``."}),
    "feature_names_in_": ("ndarray of shape (n_features_in_,)", {"": """\
Names of the features seen during ``fit``, when ``X`` has string column names."""}),
}

#: groups of entries that several estimators list alike, by a name usable in a placeholder
GROUPS = {
    "multiclass_attributes": ("classes_", "dual_coef_", "intercept_", "coef_", "pairs_",
                              "support_", "n_iter_", "problems_", "solutions_", "kernel_",
                              "X_fit_", "shape_fit_", "n_features_in_", "feature_names_in_"),
    "transductive_attributes": ("classes_", "X_fit_:transductive", "y_fit_", "kernel_",
                                "n_iter_:transductive", "shape_fit_", "n_features_in_",
                                "feature_names_in_"),
}

#: paragraphs of the Notes: ``name -> {variant: text}``, with ``{fields}`` given in the
#: placeholder as ``key=value``
PARAGRAPHS = {
    "multiclass": {variant: """\
More than two classes are handled one-vs-one by default, as by ``SVC`` (LIBSVM): one
problem per pair of classes on the samples of those two classes (the kernel's
``gamma="scale"`` resolved once, on all of the training data, as ``SVC``; ``lam=None``
is each problem's own number of samples), the prediction by vote (see :meth:`predict`).
On the seven multi-class sets of ``validation/bench_defaults.py --sets keel --max-m
1000``, one-vs-one scored -0.6 to +8.8 points against one-vs-rest (vowel +4.9 to +8.8,
segment +2.0 to +2.9, wine -0.6 or 0), which brought every binary family within 1
point of ``SVC()`` on vowel, where one-vs-rest was 6 to 8 points below.
``multi_class="ovr"`` is one-vs-rest, as ``LinearSVC``: one problem per class, that
class +1 against the rest, the prediction the largest score. ``sample_weight`` and
``class_weight`` are not supported: SPEC's formulations weigh every sample
equally""" + end for variant, end in (
        ("", "."), ("margin", " (the margin mean and variance are unweighted)."))},
    "intercept": {"": """\
**Intercept**: ``fit_intercept=True`` by default, with ``intercept_scaling=1``, as
``LinearSVC``, whose intercept is the same regularized constant feature (and as ``SVC``,
whose intercept is free): a scikit-learn user expects a classifier to fit an offset, and
a decision function through the origin misses classes that the origin does not separate,
which is the rule for features scaled to [0, 1]. On seed 002's linear protocol
(``validation/bench_intercept_protocol.py``: ten KEEL sets, features in [0, 1], 80/20
split, 5-fold search) linear ODM's test accuracy went from 63.0 to 75.3 % on pima and
from 80.3 to 91.5 % on ionosphere with it, and moved by at most 3 points on the other
eight. The defaults above were measured with it (mean {measured}; without it {before}).
``fit_intercept=False`` is the seed's machine, the default of the problem class. The
constant feature is a column of the data for the linear kernel and ``k + s^2`` for
another kernel, so every solver, path and certificate runs on it unchanged
(:mod:`refmodels._intercept`)."""},
    "defaults": {"": """\
Measured with ``MinMaxScaler`` in a pipeline, 3-fold stratified CV (``python
validation/bench_defaults.py``): breast_cancer {breast_cancer}, wine {wine}, iris {iris},
digits {digits}: mean {mean} against ``SVC()``'s 0.979 (0.979, 0.989, 0.960, 0.987).
The problem classes keep the formulation's neutral defaults: they state a problem and
are not tuned to predict; the estimator's are chosen, by that measurement, to predict
well, never per data set."""},
    "beta_choice": {"": """\
``beta`` was chosen by the difference of accuracy to ``SVC()`` over 36 sets (the four
scikit-learn sets and the KEEL sets of ``validation/bench_defaults.py --sets sklearn
keel --max-m 1000``), mean and worst set: ``beta=1`` -0.53 points (tic-tac-toe -6.4),
0.3 +0.02 (ionosphere -4.8), 0.1 +0.04 (ionosphere -4.6, then tic-tac-toe -2.3),
0.03 +0.10 (ionosphere -4.6, tic-tac-toe -2.0). 0.1 is as good as 0.03 within a tenth
of a point and three times better conditioned (the iterative solvers take steps
``1 / sigma_max`` and converge at a rate set by ``sigma_max / beta``). Ionosphere stayed
4.6 points below ``SVC`` whatever ``beta``, ``alpha`` (1, 0.1, 0) or ``gamma``
(0.1 to 3 times ``"scale"``): the kernel lacked a constant. With the bias feature
(``fit_intercept=True``, the default) it is 0.3 points below, and the worst of nine KEEL
sets (``--sets ionosphere sonar australian pima wdbc heart haberman bupa wine``) is 1.0
point below (haberman; without it, ionosphere 4.6)."""},
    "delta": {"": """\
:meth:`decision_function` returns ``-delta_c`` (larger is more likely), shape
(n_samples, n_classes), or ``delta_0 - delta_1`` (positive means ``classes_[1]``) for
two classes."""},
}

_EXAMPLE = """\
>>> from sklearn.datasets import {data}
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> from fast import {name}
>>> X, y = {data}(return_X_y=True)
>>> clf = make_pipeline(StandardScaler(), {estimator})
>>> clf.fit(X, y).score(X, y) > {threshold}
True"""


def _entries(tokens, sig):
    """The numpydoc entries of ``tokens``: ``name``, ``name:variant``, or a group of
    :data:`GROUPS` (whose members a later ``name:variant`` gives a variant)."""
    chosen = {}                                   # name -> variant, in order
    for token in tokens:
        name, _, variant = token.partition(":")
        if name in GROUPS:
            chosen.update(member.partition(":")[::2] for member in GROUPS[name])
        else:
            chosen[name] = variant
    out = []
    for name, variant in chosen.items():
        typ, texts = ENTRIES[name]
        text = texts[variant] if variant else next(iter(texts.values()))
        if isinstance(text, tuple):
            typ, text = text
        param = sig.get(name)
        if param is not None and param.default is not inspect.Parameter.empty:
            typ += f", default={param.default!r}".replace("'", '"')
        out.append(f"{name} : {typ}\n{textwrap.indent(text, '    ')}")
    return "\n".join(out)


def _paragraph(tokens):
    """The Notes paragraph ``tokens[0]`` (``name`` or ``name:variant``), its fields from
    the ``key=value`` tokens."""
    name, _, variant = tokens[0].partition(":")
    fields = dict(token.split("=", 1) for token in tokens[1:])
    return PARAGRAPHS[name][variant].format(**fields)


def _expand(doc, sig):
    """``doc`` with each placeholder line replaced by its text, at the line's indent."""
    def one(match):
        indent, body = match.group(1), " ".join(match.group(2).split())
        section, _, rest = body.partition(": ")
        if section not in ("Attributes", "Examples"):
            section, rest = None, body
        if section == "Examples":
            data, threshold, estimator = rest.split(" ", 2)
            text = _EXAMPLE.format(data=data, threshold=threshold, estimator=estimator,
                                   name=estimator.partition("(")[0])
        elif rest.split()[0].partition(":")[0] in PARAGRAPHS:
            text = _paragraph(rest.split())
        else:
            text = _entries(rest.split(), sig)
        if section:
            text = f"{section}\n{'-' * len(section)}\n{text}"
        return textwrap.indent(text, indent)

    return re.sub(r"^( *)<<(.+?)>>$", one, doc, flags=re.M | re.S)


def shared_doc(cls):
    """Class decorator: expand the placeholders of the class docstring and of the
    docstrings of the methods the class defines (see the module docstring)."""
    if cls.__doc__:
        cls.__doc__ = _expand(cls.__doc__, inspect.signature(cls.__init__).parameters)
    for func in vars(cls).values():               # methods: their entries carry no default
        if inspect.isfunction(func) and func.__doc__ and "<<" in func.__doc__:
            func.__doc__ = _expand(func.__doc__, {})
    return cls
