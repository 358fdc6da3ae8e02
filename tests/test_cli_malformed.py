"""Malformed input on the command line: exit status 2, one error line, never a traceback.

In-process (``refmodels.cli.main(argv)``), so that the many cases stay fast; the few
end-to-end subprocess runs are in ``test_cli.py``.
"""
import json
import sys
import types

import numpy as np
import pytest

import refmodels

from refmodels.cli import main

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3))
Y = np.where(X[:, 0] > 0, 1, -1)
Y[:2] = [1, -1]
XM = RNG.normal(size=(21, 3))
YM = np.arange(21) % 3


def _csv(X, y):
    return "".join(",".join(f"{v:.17g}" for v in xi) + f",{yi}\n" for xi, yi in zip(X, y))


GOOD_CSV = _csv(X, Y)
MULTI_CSV = _csv(XM, YM)
GOOD_COEF = [0.0] * 20

FILES = {
    "bin.csv": GOOD_CSV,
    "multi.csv": MULTI_CSV,
    "test.csv": "".join(",".join(f"{v:.6g}" for v in xi) + "\n" for xi in XM[:4]),
    "good.json": json.dumps({"coef": GOOD_COEF}),
    "empty.csv": "",
    "header_only.csv": "a,b,c,label\n",
    "ragged.csv": "1,2,3,1\n1,2,-1\n",
    "text_feature.csv": "1,2,3,1\n1,abc,3,-1\n",
    "nan_feature.csv": "1,2,3,1\n1,nan,3,-1\n",
    "inf_feature.csv": "1,2,3,1\n1,inf,3,-1\n",
    "complex_feature.csv": "1,2,3,1\n1,1+2j,3,-1\n",
    "label_inf.csv": "1,2,3,1\n1,2,4,inf\n2,2,1,-1\n",
    "label_nan.csv": "1,2,3,1\n1,2,4,NaN\n2,2,1,-1\n",
    "label_neginf.csv": "1,2,3,1\n1,2,4,-Infinity\n2,2,1,-1\n",
    "label_empty.csv": "1,2,3,1\n1,2,4,\n",
    "label_complex.csv": "1,2,3,1\n1,2,4,1j\n2,2,1,-1\n",
    "one_column.csv": "1\n-1\n1\n",
    "one_class.csv": "1,2,3,1\n1,2,4,1\n",
    "three_classes.csv": "1,2,3,1\n1,2,4,2\n2,2,1,3\n",
    "bad.svm": "1 a:b c:d\n-1 1:2\n",
    "nan.svm": "1 1:nan 2:1\n-1 1:2 2:0\n",
    "notes.txt": "{}",
    "bad_json.json": "{coef: [1, 2",
    "list.json": json.dumps([1, 2, 3]),
    "short.json": json.dumps({"coef": [1.0, 2.0]}),
    "dict_coef.json": json.dumps({"coef": {"a": 1}}),
    "str_coef.json": json.dumps({"coef": ["x"] * 20}),
    "null_coef.json": json.dumps({"coef": [None] * 20}),
    "ragged_coef.json": json.dumps({"coef": [[1, 2], [3]]}),
    "nan_coef.json": '{"coef": [NaN' + ", 0" * 19 + "]}",
    "inf_coef.json": '{"coef": [Infinity' + ", 0" * 19 + "]}",
    "huge_coef.json": '{"coef": [1e400' + ", 0" * 19 + "]}",
    "bool_coef.json": json.dumps({"coef": [True] * 20}),
    "scalar_coef.json": json.dumps({"coef": 5}),
    "str_scalar_coef.json": json.dumps({"coef": "0"}),
    "empty_obj.json": "{}",
    "unknown_key.json": json.dumps({"coef": GOOD_COEF, "nonsense": [1]}),
    "empty_intercept.json": json.dumps({"coef": GOOD_COEF, "intercept": []}),
    "two_intercepts.json": json.dumps({"coef": GOOD_COEF, "intercept": [1, 2]}),
    "str_intercept.json": json.dumps({"coef": GOOD_COEF, "intercept": "0.5"}),
    "with_intercept.json": json.dumps({"coef": GOOD_COEF, "intercept": 0.5}),
    "b_and_intercept.json": json.dumps({"coef": GOOD_COEF, "intercept": 0.5, "b": 0.5}),
    "w.json": json.dumps({"w": [0.0, 0.0, 0.0]}),
    "w_2d.json": json.dumps({"w": [[0.0, 0.0]] * 3}),
    "short_alpha.json": json.dumps({"alpha": [0.0] * 5}),
    "nested_dual_extra.json": json.dumps({"dual": {"alpha": [0.0] * 20, "zeta": [0.0] * 20}}),
    "nested_dual_list.json": json.dumps({"dual": [1, 2]}),
    "mc_coef_1d.json": json.dumps({"coef": [0.0] * 21}),
    "mu_short.json": json.dumps({"mu": [1.0], "coef": GOOD_COEF, "intercept": 0.0}),
    "no_mu.json": json.dumps({"coef": GOOD_COEF, "intercept": 0.0}),
    "drr_coef.json": json.dumps({"coef": [[0.0] * 3] * 21}),
    "drr_test_2cols.csv": "1,2\n3,4\n",
    "garbage.npz": b"this is not a zip archive",
    "typo_line1.csv": "1,2,x,1\n" + GOOD_CSV,
    "huge.csv": "1e308,2,3,1\n" + GOOD_CSV,
    "e160.csv": GOOD_CSV + "1e160,2,3,-1\n",
    "bad_token.svm": "1 1:2 2:3\n-1 1:1 x 3:4\n",
    "unsorted.svm": "1 1:2 2:3\n-1 3:1 2:4\n",
    "label_none.csv": "1,2,3,1\n1,2,4,None\n2,2,1,-1\n",
    "notutf8.csv": b"\xff\xfe\x00\x01\x80\x81,1\n",
}


def _npz_files(d):
    np.savez(d / "complex.npz", coef=np.zeros(20) + 1j)
    np.savez(d / "strings.npz", coef=np.array(["a"] * 20))
    np.save(d / "array.npy", np.zeros(20))
    np.savez(d / "object.npz", coef=np.array([np.zeros(2), np.zeros(3)], dtype=object))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_malformed")
    for name, content in FILES.items():
        if isinstance(content, bytes):
            (d / name).write_bytes(content)
        else:
            (d / name).write_text(content)
    (d / "a_directory").mkdir()
    _npz_files(d)
    return d


SVM = ["certify", "--family", "SVM", "--data", "{d}/bin.csv"]
SOL = ["--solution", "{d}/good.json"]


def _data(name):
    """SVM on the data file ``name``, with a good solution."""
    return ["certify", "--family", "SVM", "--data", "{d}/" + name, *SOL]


def _solution(name):
    """SVM on good data, with the solution file ``name``."""
    return [*SVM, "--solution", "{d}/" + name]


CASES = {
    # --- data files
    "data missing": _data("nope.csv"),
    "data is a directory": _data("a_directory"),
    "data empty": _data("empty.csv"),
    "data header only": _data("header_only.csv"),
    "data ragged rows": _data("ragged.csv"),
    "data text feature": _data("text_feature.csv"),
    "data NaN feature": _data("nan_feature.csv"),
    "data inf feature": _data("inf_feature.csv"),
    "data complex feature": _data("complex_feature.csv"),
    "label inf": _data("label_inf.csv"),
    "label NaN": _data("label_nan.csv"),
    "label -Infinity": _data("label_neginf.csv"),
    "label empty": _data("label_empty.csv"),
    "label complex": _data("label_complex.csv"),
    "data one column": _data("one_column.csv"),
    "data one class": _data("one_class.csv"),
    "data three classes for SVM": _data("three_classes.csv"),
    "data not UTF-8": _data("notutf8.csv"),
    "svmlight malformed": _data("bad.svm"),
    "svmlight NaN": _data("nan.svm"),
    "data typo in line 1": _data("typo_line1.csv"),
    "data 1e308": _data("huge.csv"),
    "data 1e160": _data("e160.csv"),
    "data 1e308 rbf": [*_data("huge.csv"), "--kernel", "rbf"],
    "svmlight bad token": _data("bad_token.svm"),
    "svmlight unsorted indices": _data("unsorted.svm"),
    "label None among numbers": _data("label_none.csv"),
    # --- family and parameters
    "family unknown": ["certify", "--family", "SVR", "--data", "{d}/bin.csv", *SOL],
    "family empty": ["certify", "--family", "", "--data", "{d}/bin.csv", *SOL],
    "param unknown name": [*SVM, "--param", "lambda=1", *SOL],
    "param without =": [*SVM, "--param", "C", *SOL],
    "param empty value": [*SVM, "--param", "C=", *SOL],
    "param twice": [*SVM, "--param", "C=1", "--param", "C=2", *SOL],
    "param negative C": [*SVM, "--param", "C=-1", *SOL],
    "param C nan": [*SVM, "--param", "C=nan", *SOL],
    "param C inf": [*SVM, "--param", "C=inf", *SOL],
    "param C text": [*SVM, "--param", "C=abc", *SOL],
    "param C complex": [*SVM, "--param", "C=1+2j", *SOL],
    "param C boolean": [*SVM, "--param", "C=true", *SOL],
    "param bool not a bool": [*SVM, "--param", "fit_intercept=maybe", *SOL],
    "param C subnormal": [*SVM, "--param", "C=5e-324", *SOL],
    "param C 1e160": [*SVM, "--param", "C=1e160", *SOL],
    "param theta 1": ["certify", "--family", "ODM", "--data", "{d}/bin.csv", "--param",
                      "theta=1", *SOL],
    "McODM missing lam": ["certify", "--family", "McODM", "--data", "{d}/multi.csv", "--param",
                          "mu=1", "--param", "theta=0.1", *SOL],
    "param kernel via --param": [*SVM, "--param", "kernel=rbf", *SOL],
    "param gamma via --param": [*SVM, "--param", "gamma=0.5", *SOL],
    # --- kernels
    "linear with gamma": [*SVM, "--kernel", "linear", "--gamma", "0.5", *SOL],
    "default kernel with gamma": [*SVM, "--gamma", "0.5", *SOL],
    "linear with degree": [*SVM, "--kernel", "linear", "--degree", "2", *SOL],
    "rbf with degree": [*SVM, "--kernel", "rbf", "--degree", "2", *SOL],
    "rbf with coef0": [*SVM, "--kernel", "rbf", "--coef0", "1", *SOL],
    "kernel unknown": [*SVM, "--kernel", "sigmoid", *SOL],
    "gamma negative": [*SVM, "--kernel", "rbf", "--gamma", "-1", *SOL],
    "gamma nan": [*SVM, "--kernel", "rbf", "--gamma", "nan", *SOL],
    "gamma inf": [*SVM, "--kernel", "rbf", "--gamma", "inf", *SOL],
    "gamma text": [*SVM, "--kernel", "rbf", "--gamma", "big", *SOL],
    "degree fractional": [*SVM, "--kernel", "poly", "--degree", "2.5", *SOL],
    "degree zero": [*SVM, "--kernel", "poly", "--degree", "0", *SOL],
    "coef0 negative": [*SVM, "--kernel", "poly", "--coef0", "-1", *SOL],
    "coef0 nan": [*SVM, "--kernel", "poly", "--coef0", "nan", *SOL],
    "MKLm with --kernel": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv", "--kernel",
                           "rbf", *SOL],
    "MKLm without base kernels": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv", *SOL],
    "SVM with --base-kernel": [*SVM, "--base-kernel", "linear", *SOL],
    "base kernel bad gamma": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                              "--base-kernel", "rbf:gamma=x", *SOL],
    "base kernel unknown": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                            "--base-kernel", "sigmoid", *SOL],
    "base kernel linear with gamma": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                                      "--base-kernel", "linear:gamma=1", *SOL],
    "base kernel without =": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                              "--base-kernel", "rbf:gamma", *SOL],
    "base kernel degree fractional": ["certify", "--family", "EpsMKL", "--data", "{d}/bin.csv",
                                      "--base-kernel", "poly:degree=1.5", *SOL],
    # --- DRR / DRM
    "DRR without test data": ["certify", "--family", "DRR", "--data", "{d}/multi.csv",
                              "--param", "alpha=1", "--param", "beta=1", *SOL],
    "SVM with test data": [*SVM, "--test-data", "{d}/test.csv", *SOL],
    "DRR test data wrong width": ["certify", "--family", "DRM", "--data", "{d}/multi.csv",
                                  "--param", "alpha=1", "--param", "beta=1", "--test-data",
                                  "{d}/drr_test_2cols.csv", *SOL],
    "DRR test data missing": ["certify", "--family", "DRM", "--data", "{d}/multi.csv",
                              "--param", "alpha=1", "--param", "beta=1", "--test-data",
                              "{d}/nope.csv", *SOL],
    "DRR beta 0": ["certify", "--family", "DRM", "--data", "{d}/multi.csv", "--param", "alpha=1",
                   "--param", "beta=0", "--test-data", "{d}/test.csv", *SOL],
    "DRR q below 1": ["certify", "--family", "DRR", "--data", "{d}/multi.csv", "--param",
                      "alpha=1", "--param", "beta=1", "--param", "q=0.5", "--test-data",
                      "{d}/test.csv", *SOL],
    "DRR rho unknown": ["certify", "--family", "DRR", "--data", "{d}/multi.csv", "--param",
                        "alpha=1", "--param", "beta=1", "--param", "rho=cube", "--test-data",
                        "{d}/test.csv", *SOL],
    "DRR coef wrong shape": ["certify", "--family", "DRM", "--data", "{d}/multi.csv", "--param",
                             "alpha=1", "--param", "beta=1", "--test-data", "{d}/test.csv",
                             "--solution", "{d}/drr_coef.json"],
    # --- tolerance
    "tol inf": [*SVM, "--tol", "inf", *SOL],
    "tol nan": [*SVM, "--tol", "nan", *SOL],
    "tol negative": [*SVM, "--tol", "-1", *SOL],
    "tol zero": [*SVM, "--tol", "0", *SOL],
    "tol text": [*SVM, "--tol", "tiny", *SOL],
    # --- solution files
    "solution missing": _solution("nope.json"),
    "solution missing npz": _solution("nope.npz"),
    "solution wrong extension": _solution("notes.txt"),
    "solution is a directory": [*SVM, "--solution", "{d}/a_directory", "--solution-format",
                                "json"],
    "solution invalid JSON": _solution("bad_json.json"),
    "solution JSON list": _solution("list.json"),
    "coef wrong length": _solution("short.json"),
    "coef a dict": _solution("dict_coef.json"),
    "coef strings": _solution("str_coef.json"),
    "coef nulls": _solution("null_coef.json"),
    "coef ragged": _solution("ragged_coef.json"),
    "coef NaN": _solution("nan_coef.json"),
    "coef Infinity": _solution("inf_coef.json"),
    "coef overflowing": _solution("huge_coef.json"),
    "coef booleans": _solution("bool_coef.json"),
    "coef a scalar": _solution("scalar_coef.json"),
    "coef a string": _solution("str_scalar_coef.json"),
    "solution empty object": _solution("empty_obj.json"),
    "solution unknown key": _solution("unknown_key.json"),
    "intercept empty": [*SVM, "--param", "fit_intercept=true", "--solution",
                        "{d}/empty_intercept.json"],
    "intercept two values": [*SVM, "--param", "fit_intercept=true", "--solution",
                             "{d}/two_intercepts.json"],
    "intercept a string": [*SVM, "--param", "fit_intercept=true", "--solution",
                           "{d}/str_intercept.json"],
    "intercept without fit_intercept": _solution("with_intercept.json"),
    "intercept for ODM": ["certify", "--family", "ODM", "--data", "{d}/bin.csv", "--solution",
                          "{d}/with_intercept.json"],
    "intercept for DRM": ["certify", "--family", "DRM", "--data", "{d}/multi.csv", "--param",
                          "alpha=1", "--param", "beta=1", "--test-data", "{d}/test.csv",
                          "--solution", "{d}/with_intercept.json"],
    "b and intercept": [*SVM, "--param", "fit_intercept=1", "--solution",
                        "{d}/b_and_intercept.json"],
    "w with rbf kernel": [*SVM, "--kernel", "rbf", "--solution", "{d}/w.json"],
    "w two-dimensional": _solution("w_2d.json"),
    "dual wrong length": _solution("short_alpha.json"),
    "nested dual unknown name": _solution("nested_dual_extra.json"),
    "nested dual a list": _solution("nested_dual_list.json"),
    "npz complex": _solution("complex.npz"),
    "npz strings": _solution("strings.npz"),
    "npz object array": _solution("object.npz"),
    "npz not a zip": _solution("garbage.npz"),
    "npy instead of npz": [*SVM, "--solution", "{d}/array.npy", "--solution-format", "npz"],
    "solution format unknown": [*SVM, *SOL, "--solution-format", "pickle"],
    "npz as json": [*SVM, "--solution", "{d}/complex.npz", "--solution-format", "json"],
    "reference and no-reference": [*SVM, *SOL, "--reference", "--no-reference"],
    "McODM coef one-dimensional": ["certify", "--family", "McODM", "--data", "{d}/multi.csv",
                                   "--param", "lam=1", "--param", "mu=1", "--param", "theta=0.1",
                                   "--solution", "{d}/mc_coef_1d.json"],
    "MKLm mu wrong length": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                             "--base-kernel", "linear", "--base-kernel", "rbf:gamma=0.5",
                             "--solution", "{d}/mu_short.json"],
    "MKLm without mu": ["certify", "--family", "MKLm", "--data", "{d}/bin.csv",
                        "--base-kernel", "linear", "--solution", "{d}/no_mu.json"],
    # --- the command line itself
    "no solution option": [*SVM],
    "no data option": ["certify", "--family", "SVM", *SOL],
    "unknown option": [*SVM, *SOL, "--frobnicate"],
    "no subcommand": [],
    "unknown subcommand": ["solve"],
    "verify unknown family": ["verify", "--family", "foo", "--no-fast"],
    "verify empty family": ["verify", "--family", "", "--no-fast"],
    "verify certify-only family": ["verify", "--family", "EpsMKL", "--no-fast"],
    "verify jobs zero": ["verify", "--family", "SVM", "--no-fast", "--jobs", "0"],
    "verify jobs not a number": ["verify", "--family", "SVM", "--no-fast", "--jobs", "two"],
}


def _expand(argv, d):
    return [a.replace("{d}", str(d)) for a in argv]


def run_main(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:              # main() returns codes; tolerate a raise as well
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_there_are_many_cases():
    assert len(CASES) >= 70


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_exits_2_without_traceback(name, files, capsys):
    code, out, err = run_main(_expand(CASES[name], files), capsys)
    assert code == 2, f"{name}: exit {code}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err and "Traceback" not in out, err
    errors = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(errors) == 1, err                         # one line that says what is wrong
    assert len(errors[0]) < 600, errors[0]
    assert len(err.strip().splitlines()) == 1, err       # and nothing else: no warnings


@pytest.mark.parametrize("name,needle", [
    ("param unknown name", "valid names: C, fit_intercept"),
    ("intercept without fit_intercept", "--param fit_intercept=true"),
    ("linear with gamma", "--gamma does not apply to --kernel linear"),
    ("tol inf", "--tol"),
    ("label inf", "label 'inf'"),
    ("coef a dict", "'coef'"),
    ("intercept empty", "'intercept' must be one number"),
    ("family unknown", "--family must be one of SVM, ODML"),
    ("verify unknown family", "--family must be one of SVM"),
    ("data complex feature", "complex"),
    ("npz complex", "complex"),
    ("DRR without test data", "--test-data"),
    ("MKLm without base kernels", "--base-kernel"),
    ("solution missing", "no such file"),
    ("McODM missing lam", "--param lam=..."),
    ("data typo in line 1", "line 1, column 3: 'x' is not a number"),
    ("data 1e308", "X's entries reach 1e+308"),
    ("data 1e160", "X's entries reach 1e+160"),
    ("svmlight bad token", "line 2: the token 'x'"),
    ("label None among numbers", "line 2: the label 'None' is text"),
    ("param C subnormal", "C must be at least"),
    ("npz as json", "not JSON"),
    ("reference and no-reference", "contradict"),
])
def test_malformed_input_messages(name, needle, files, capsys):
    code, _, err = run_main(_expand(CASES[name], files), capsys)
    assert code == 2
    assert needle in err, err


def test_solution_format_without_the_reader(files, capsys, monkeypatch):
    # the attribute first: looking it up imports the module (refmodels' lazy __getattr__),
    # which must not find the None below
    monkeypatch.delattr(refmodels, "formats", raising=False)
    monkeypatch.setitem(sys.modules, "refmodels.formats", None)     # as if absent
    code, _, err = run_main(_expand([*SVM, "--solution", "{d}/model.txt",
                                     "--solution-format", "libsvm"], files), capsys)
    assert code == 2 and "Traceback" not in err
    assert "not available" in err


def test_solution_format_reader_errors_are_bad_input(files, capsys, monkeypatch):
    fake = types.ModuleType("refmodels.formats")

    def load_model(path, fmt, X, y):
        raise ValueError(f"{path} is not a {fmt} model file")

    fake.load_model = load_model
    monkeypatch.setitem(sys.modules, "refmodels.formats", fake)
    monkeypatch.setattr(refmodels, "formats", fake, raising=False)
    code, _, err = run_main(_expand([*SVM, "--solution", "{d}/good.json",
                                     "--solution-format", "liblinear"], files), capsys)
    assert code == 2 and "not a liblinear model file" in err and "Traceback" not in err


def test_derive_absent_is_bad_input_not_a_crash(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "refmodels.derive", None)
    monkeypatch.delattr(refmodels, "derive", raising=False)
    code, out, err = run_main(["derive", "SVM"], capsys)
    assert code == 2 and "not available" in err and "Traceback" not in err
    code, out, err = run_main(["--help"], capsys)
    assert code == 0 and "certify" in out
