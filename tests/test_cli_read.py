"""``refmodels certify`` never drops data: a byte-order mark is stripped, a first line is a
header only when none of its cells is a number, every malformed CSV cell or LIBSVM token is
an error naming its line, and the rows and features read are printed (text and JSON).
Plus the command line's errors of the right kind: exit status 2 and one line naming the
input, no warnings."""
from __future__ import annotations

import json

import numpy as np
import pytest

import refmodels as rm
from refmodels.cli import main

RNG = np.random.default_rng(11)
X = RNG.normal(size=(20, 3))
Y = np.where(X[:, 0] + 0.2 * RNG.normal(size=20) > 0, 1, -1)


def _csv_lines(X, y):
    return [",".join(f"{v:.17g}" for v in xi) + f",{yi}" for xi, yi in zip(X, y)]


def _svm_lines(X, y, zero_based=False):
    o = 0 if zero_based else 1
    return [f"{yi} " + " ".join(f"{j + o}:{v:.17g}" for j, v in enumerate(xi))
            for xi, yi in zip(X, y)]


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_read")
    prob = rm.SVM(X, Y, C=1.0)
    (d / "sol.json").write_text(json.dumps({"coef": prob.solve().coef.tolist()}))
    np.savez(d / "sol.npz", coef=np.zeros(20))
    return d


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def certify(d, data, *extra):
    return ["certify", "--family", "SVM", "--param", "C=1", "--data", d / data,
            "--solution", d / "sol.json", *extra]


def write(d, name, lines, encoding="utf-8"):
    path = d / name
    path.write_text("\n".join(lines) + "\n", encoding=encoding)
    return name


def one_line_error(code, err, *needles):
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err          # one line: no warnings either
    assert "warning" not in err.lower(), err
    for n in needles:
        assert n in err, err


# ---- CSV --------------------------------------------------------------------------------

def test_plain_csv_reads_every_row_and_says_so(d, capsys):
    name = write(d, "plain.csv", _csv_lines(X, Y))
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert f"read:       20 rows and 3 features read from {d / name} (CSV)" in out


def test_byte_order_mark_is_stripped_and_no_row_is_lost(d, capsys):
    """Excel's UTF-8 export starts with a BOM: ``float("\\ufeff0.5")`` failed, the first row
    was taken as a header and dropped, and the certificate held for the other 19."""
    name = write(d, "bom.csv", _csv_lines(X, Y), encoding="utf-8-sig")
    assert (d / name).read_bytes().startswith(b"\xef\xbb\xbf")
    code, out, err = run(certify(d, name, "--json"), capsys)
    assert code == 0, out + err
    doc = json.loads(out)
    assert doc["problem"]["m"] == 20
    (read,) = doc["problem"]["read"]
    assert read["rows"] == 20 and read["features"] == 3 and read["header_line"] is None


def test_bom_before_a_header_is_stripped_too(d, capsys):
    name = write(d, "bom_header.csv", ["x1,x2,x3,label", *_csv_lines(X, Y)],
                 encoding="utf-8-sig")
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert "20 rows and 3 features" in out and "line 1 a header (x1, x2, x3, label)" in out


@pytest.mark.parametrize("first,column,cell", [
    ("1,2,x,1", 3, "'x'"),
    ("a,2,3,1", 1, "'a'"),
    ("1,,3,1", 2, "empty cell"),
])
def test_a_first_line_with_a_number_is_data_and_its_bad_cell_is_named(d, capsys, first, column,
                                                                      cell):
    """A typo in line 1 made it a "header" and the row was dropped, exit 0."""
    name = write(d, f"typo{column}.csv", [first, *_csv_lines(X[1:], Y[1:])])
    code, _, err = run(certify(d, name), capsys)
    one_line_error(code, err, f"line 1, column {column}", cell, "not a header")


def test_a_header_line_has_no_numeric_cell(d, capsys):
    name = write(d, "header.csv", ['"f1","f2","f3","label"', *_csv_lines(X, Y)])
    code, out, err = run(certify(d, name, "--json"), capsys)
    assert code == 0, out + err
    (read,) = json.loads(out)["problem"]["read"]
    assert read["rows"] == 20 and read["header_line"] == 1


def test_comment_lines_are_counted_not_silent(d, capsys):
    lines = _csv_lines(X, Y)
    lines.insert(5, "# a comment")
    lines.insert(0, "@relation data")
    name = write(d, "comments.csv", lines)
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert "20 rows and 3 features" in out and "2 comment lines skipped" in out


def test_quoted_numbers_are_numbers(d, capsys):
    lines = [",".join(f'"{c}"' for c in ln.split(",")) for ln in _csv_lines(X, Y)]
    name = write(d, "quoted.csv", lines)
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert "20 rows and 3 features" in out


@pytest.mark.parametrize("lines,needles", [
    (["1;2;3;1", "2;3;4;-1"], ["line 2 has 1 column", "separated by ';'"]),
    (["1,2,3,1", "1,2,3,yes", "2,3,4,-1"], ["line 2: the label 'yes' is text",
                                            "labels before it are numbers"]),
    (["a,b,c,label"], ["a header line (line 1) but no data rows"]),
    (["1,2,3,1", "4,5,1e400,-1"], ["line 2, column 3", "'1e400' is not finite"]),
])
def test_csv_errors_name_the_line(d, capsys, lines, needles):
    name = write(d, f"bad{abs(hash(tuple(lines)))}.csv", lines)
    code, _, err = run(certify(d, name), capsys)
    one_line_error(code, err, *needles)


# ---- LIBSVM format -------------------------------------------------------------------------

def test_libsvm_reads_every_row(d, capsys):
    lines = _svm_lines(X, Y)
    lines.insert(3, "# a comment")
    lines[7] += "  # trailing comment"
    name = write(d, "ok.svm", lines)
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert "20 rows and 3 features read" in out and "(LIBSVM format)" in out
    assert "1 comment line skipped" in out


@pytest.mark.parametrize("row,needles", [
    ("1 1:2 2:abc", ["line 4, token '2:abc'", "'abc' is not a number"]),
    ("1 1:2 x 2:3", ["line 4: the token 'x' is not index:value"]),
    ("1 2:1 1:3", ["line 4: the token '1:3'", "indices must increase"]),
    ("1 1:1 1:3", ["line 4: the token '1:3'", "index 1 repeated"]),
    ("1 -1:1 1:3", ["line 4: the token '-1:1'", "not a non-negative integer"]),
    ("1 1.5:1", ["line 4: the token '1.5:1'"]),
    ("1 1: 2:3", ["line 4: the token '1:' is not index:value"]),
    ("1 1:nan", ["line 4, token '1:nan'", "not finite"]),
    ("1 1:1e400", ["line 4, token '1:1e400'", "not finite"]),
    ("1 1:2:3", ["line 4, token '1:2:3'"]),
    ("inf 1:2", ["line 4: the label 'inf'"]),
    ("1,2 1:2", ["line 4: the label '1,2' is a list"]),
    ("abc 1:2", ["line 4: the label 'abc' is text"]),
    ("1:2 2:3", ["line 4: the first token '1:2' must be the label"]),
])
def test_libsvm_bad_tokens_name_line_and_token(d, capsys, row, needles):
    """scikit-learn's reader said "could not convert string to float: b'abc'" without a
    line, or took NaN and inf as features (named later, without a line)."""
    lines = _svm_lines(X, Y)
    lines[3] = row
    name = write(d, f"bad{abs(hash(row))}.svm", lines)
    code, _, err = run(certify(d, name), capsys)
    one_line_error(code, err, *needles)


def test_libsvm_zero_based_file_is_read_and_said(d, capsys):
    """scikit-learn's ``dump_svmlight_file`` writes zero-based indices: read as such, and
    the summary says so."""
    name = write(d, "zero.svm", _svm_lines(X, Y, zero_based=True))
    code, out, err = run(certify(d, name), capsys)
    assert code == 0, out + err
    assert "20 rows and 3 features" in out and "indices zero-based" in out


def test_test_data_follow_the_training_data_indices(d, capsys):
    """Training one-based, test points with an index 0: an error, not a silent shift."""
    XM = RNG.normal(size=(12, 3))
    ym = np.arange(12) % 3
    train = write(d, "m.svm", _svm_lines(XM, ym))
    test = write(d, "t0.svm", ["0 0:1 1:2 2:3", "0 1:1"])
    p = rm.DRM(XM, ym, [[1.0, 2.0, 3.0]], alpha=1.0, beta=1.0)
    np.savez(d / "drm.npz", coef=np.zeros((12, 2)))
    code, _, err = run(["certify", "--family", "DRM", "--param", "alpha=1", "--param", "beta=1",
                        "--data", d / train, "--test-data", d / test, "--solution",
                        d / "drm.npz"], capsys)
    one_line_error(code, err, "--test-data", "line 1 has the index 0")
    assert p.n_test == 1


# ---- the command line's errors of the right kind ---------------------------------------------

@pytest.mark.parametrize("scale", [1e308, 1e160])
def test_data_whose_squared_norms_overflow_is_one_clean_line(d, capsys, scale):
    """1e308 printed about ten RuntimeWarning lines before its result."""
    Xb = X.copy()
    Xb[0, 0] = scale
    name = write(d, f"big{scale:.0e}.csv", _csv_lines(Xb, Y))
    for extra in ([], ["--no-reference"], ["--kernel", "rbf"]):
        code, out, err = run(certify(d, name, *extra), capsys)
        one_line_error(code, err, f"--data {d / name}: X's entries reach", "scale the features")
        assert out == ""


def test_reference_and_no_reference_together_are_refused(d, capsys):
    name = write(d, "plain.csv", _csv_lines(X, Y))
    code, _, err = run(certify(d, name, "--reference", "--no-reference"), capsys)
    one_line_error(code, err, "--reference and --no-reference contradict each other")
    code, _, err = run(certify(d, name, "--no-reference", "--reference"), capsys)
    one_line_error(code, err, "--no-reference and --reference")
    code, _, err = run(certify(d, name, "--no-reference", "--no-reference"), capsys)
    assert code == 0, err


def test_npz_given_as_json_says_what_it_is(d, capsys):
    name = write(d, "plain.csv", _csv_lines(X, Y))
    code, _, err = run(["certify", "--family", "SVM", "--data", d / name, "--solution",
                        d / "sol.npz", "--solution-format", "json"], capsys)
    one_line_error(code, err, "a .npz archive (zip), not JSON", "--solution-format npz")
    assert "CSV" not in err


def test_npz_given_as_data_says_what_it_is(d, capsys):
    code, _, err = run(["certify", "--family", "SVM", "--data", d / "sol.npz", "--solution",
                        d / "sol.json"], capsys)
    one_line_error(code, err, "a zip archive", "not a text file (CSV or LIBSVM format)")


@pytest.mark.parametrize("param,needle", [
    ("C=5e-324", "--param C=5e-324: C must be at least"),
    ("C=1e160", "--param C=1e+160: C must be at most 1e+150"),
])
def test_extreme_hyperparameters_are_one_line_naming_them(d, capsys, param, needle):
    name = write(d, "plain.csv", _csv_lines(X, Y))
    argv = certify(d, name)
    argv[argv.index("C=1")] = param
    code, _, err = run(argv, capsys)
    one_line_error(code, err, needle)


def test_labels_the_problem_refuses_name_the_file(d, capsys):
    name = write(d, "one_class.csv", _csv_lines(X, np.ones(20, int)))
    code, _, err = run(certify(d, name), capsys)
    one_line_error(code, err, f"--data {d / name} (the labels, last column): y must contain "
                              "two classes")


def test_reference_value_error_is_bad_input_as_in_python(d, capsys, monkeypatch):
    """``certify()`` raises a reference's ValueError in Python (tests/test_errors.py); the
    command line reported it as "reference unavailable" and exit 0. Now both say it."""
    def overflow(self):
        raise ValueError("kernel=Polynomial(degree=9) on X gives non-finite kernel values")

    monkeypatch.setattr(rm.SVM, "reference_solution", overflow)
    name = write(d, "plain.csv", _csv_lines(X, Y))
    code, _, err = run(certify(d, name), capsys)
    one_line_error(code, err, "non-finite kernel values")
    code, _, err = run(certify(d, name, "--no-reference"), capsys)
    assert code == 0, err
