"""Reading the files ``refmodels certify`` takes: the data (CSV with the label last, or
LIBSVM/svmlight), the test points of DRR/DRM, and the solution (``.npz`` or ``.json`` with
named arrays, or another tool's model file through :mod:`refmodels.formats`), turned into
the keyword arguments of ``prob.solution_from``. Every malformed input is a
:class:`CLIError` naming the file, the line and the rule."""
from __future__ import annotations

import csv
import inspect
import json
import math
import os

import numpy as np

import refmodels as rm

from ._common import CLIError, _looks_complex, _one_line, _param_names

#: the solution files --solution-format names
_SOLUTION_FORMATS = ("npz", "json", "libsvm", "liblinear", "libodm")


# ---- data files ----------------------------------------------------------------------

#: the first bytes of a zip archive (what np.savez writes)
_ZIP_MAGIC = b"PK\x03\x04"


def _open_text(path, what, expected="CSV or LIBSVM format"):
    """The text of ``path`` (UTF-8; a byte-order mark, as Excel writes, is dropped)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return fh.read()
    except FileNotFoundError:
        raise CLIError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{what} {path}: is a directory, not a file") from None
    except UnicodeDecodeError:
        if _starts_with(path, _ZIP_MAGIC):
            raise CLIError(f"{what} {path}: a zip archive (as np.savez writes a .npz), not a "
                           f"text file ({expected})") from None
        raise CLIError(f"{what} {path}: not a UTF-8 text file ({expected})") from None
    except OSError as exc:
        raise CLIError(f"{what} {path}: {exc.strerror or exc}") from None


def _starts_with(path, magic):
    try:
        with open(path, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


_NONFINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity",
              "-infinity"}


def _label_value(s, where):
    s = s.strip()
    if not s:
        raise CLIError(f"{where}: empty label")
    if s.lower() in _NONFINITE:
        raise CLIError(f"{where}: the label {s!r} is not a valid class label (NaN or inf)")
    try:
        v = float(s)
    except ValueError:
        if _looks_complex(s):
            raise CLIError(f"{where}: the label {s!r} is a complex number") from None
        return s
    if not math.isfinite(v):
        raise CLIError(f"{where}: the label {s!r} is not finite")
    return int(v) if v == int(v) else v


def _is_svmlight(text):
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")),
                 "")
    return ":" in first and "," not in first


class _Read:
    """What a data file held: the lines read and those skipped, for the summary that
    ``refmodels certify`` prints (nothing is dropped silently)."""

    def __init__(self, path, fmt):
        self.path, self.fmt = str(path), fmt
        self.rows = self.features = 0
        self.header = None                 # (line number, cells) of a CSV header line
        self.comments = self.blank = 0
        self.notes = []
        self.zero_based = None             # LIBSVM: the indices' base

    def summary(self):
        parts = [(f"{self.rows} rows and {self.features} features read from {self.path} "
                  f"({self.fmt})")]
        if self.header is not None:
            n, cells = self.header
            shown = ", ".join(cells)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            parts.append(f"line {n} a header ({shown})")
        if self.comments:
            parts.append(f"{self.comments} comment line{'s' * (self.comments != 1)} skipped")
        parts += self.notes
        return "; ".join(parts)

    def to_dict(self):
        return {"file": self.path, "format": self.fmt, "rows": self.rows,
                "features": self.features,
                "header_line": None if self.header is None else self.header[0],
                "comment_lines": self.comments, "notes": list(self.notes)}


def _csv_rows(text, path, what, read=None):
    """Rows of a CSV file as lists of stripped cells (quotes removed, as the csv module
    reads them), with their line numbers. Blank lines and comment lines (``#``, ``@``) are
    skipped and counted in ``read``."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            if read is not None:
                read.blank += 1
            continue
        if line.startswith(("#", "@")):
            if read is not None:
                read.comments += 1
            continue
        try:
            cells = next(csv.reader([line], skipinitialspace=True))
        except csv.Error as exc:
            raise CLIError(f"{what} {path}: line {n} is not valid CSV ({exc})") from None
        rows.append((n, [c.strip() for c in cells]))
    if not rows:
        raise CLIError(f"{what} {path} has no data rows")
    return rows


def _is_number(s):
    try:
        float(s)
    except ValueError:
        return False
    return True


def _split_header(rows, path, what, read=None):
    """``rows`` without a header line: the first line is a header only when every cell of it
    is non-numeric (a line with a number in it is data, checked cell by cell)."""
    n0, first = rows[0]
    if any(_is_number(c) for c in first):
        return rows
    if read is not None:
        read.header = (n0, first)
    rows = rows[1:]
    if not rows:
        raise CLIError(f"{what} {path} has a header line (line {n0}) but no data rows")
    return rows


def _number(s, where, hint=""):
    try:
        v = float(s)
    except ValueError:
        if not s:
            raise CLIError(f"{where}: empty cell (a missing value){hint}") from None
        if _looks_complex(s):
            raise CLIError(f"{where}: {s!r} is a complex number (features must be real)") from None
        raise CLIError(f"{where}: {s!r} is not a number{hint}") from None
    if not math.isfinite(v):
        raise CLIError(f"{where}: {s!r} is not finite (features must be finite)")
    return v


def _features(parts, what, path, n, first_line):
    """The feature cells of line ``n`` as floats; on the first line (no header found) an
    error says why it was not taken as a header."""
    hint = (f" (line {n} has numeric cells, so it is data, not a header: a header line has "
            "no numeric cell)") if n == first_line else ""
    return [_number(p, f"{what} {path}: line {n}, column {j + 1}", hint)
            for j, p in enumerate(parts)]


def _width_error(what, path, n, parts, width, first):
    hint = ""
    if len(parts) == 1 and ";" in parts[0]:
        hint = " (the cells seem separated by ';': the CSV must be comma-separated)"
    raise CLIError(f"{what} {path}: line {n} has {len(parts)} column"
                   f"{'s' * (len(parts) != 1)}; {first}{hint}")


def _check_label_kinds(labels, lines, path, what):
    """Labels all numbers or all text: a stray word among numeric labels is a typo, not a
    class of its own."""
    kinds = [isinstance(v, str) for v in labels]
    if any(kinds) and not all(kinds):
        text_first = kinds[0]
        i = next(k for k, t in enumerate(kinds) if t != text_first)
        kind = "text" if kinds[i] else "a number"
        others = "numbers" if not text_first else "text"
        raise CLIError(f"{what} {path}: line {lines[i]}: the label {labels[i]!r} is {kind}; the "
                       f"labels before it are {others}")


def _read_data_report(path, what="--data"):
    """``(X, y, read)`` from CSV (label in the last column; a first line without any
    numeric cell is a header) or LIBSVM/svmlight format; ``read`` says what was read and
    skipped (:class:`_Read`)."""
    text = _open_text(path, what)
    if _is_svmlight(text):
        return _read_svmlight_text(text, path, what)
    read = _Read(path, "CSV")
    rows = _split_header(_csv_rows(text, path, what, read), path, what, read)
    first_line = rows[0][0] if read.header is None else None
    width = len(rows[0][1])
    if width < 2:
        _width_error(what, path, rows[0][0], rows[0][1], width,
                     "a row needs at least one feature and the label (last column)")
    X, y, lines = [], [], []
    for n, parts in rows:
        if len(parts) != width:
            _width_error(what, path, n, parts, width, f"the first data row has {width}")
        X.append(_features(parts[:-1], what, path, n, first_line))
        y.append(_label_value(parts[-1], f"{what} {path}: line {n}"))
        lines.append(n)
    _check_label_kinds(y, lines, path, what)
    read.rows, read.features = len(X), width - 1
    return np.asarray(X, float), np.asarray(y), read


def _read_data(path, what="--data"):
    """``(X, y)`` of :func:`_read_data_report`."""
    X, y, _ = _read_data_report(path, what)
    return X, y


def _fmt_num(v):
    v = float(v)
    return repr(int(v)) if math.isfinite(v) and v == int(v) else repr(v)


def _read_svmlight_text(text, path, what, n_features=None, zero_based=None):
    """``(X, y, read)`` from LIBSVM/svmlight text: ``label index:value ...`` per line,
    indices increasing, ``#`` starting a comment, an optional ``qid:n`` after the label.
    Indices start at 1 (LIBSVM); a file with an index 0 is zero-based (as scikit-learn's
    ``dump_svmlight_file`` writes), which the summary says. ``n_features`` / ``zero_based``:
    those of the training data (for the test points). Every malformed token is an error
    naming its line and the token."""
    read = _Read(path, "LIBSVM format")
    labels, lines, rows, cols, vals = [], [], [], [], []
    qid = False
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            if line.strip():
                read.comments += 1
            else:
                read.blank += 1
            continue
        toks = body.split()
        where = f"{what} {path}: line {n}"
        lab = toks[0]
        if ":" in lab:
            raise CLIError(f"{where}: the first token {lab!r} must be the label (LIBSVM format: "
                           "label index:value index:value ...)")
        if "," in lab:
            raise CLIError(f"{where}: the label {lab!r} is a list (multi-label files are not "
                           "supported: one class label per line)")
        labels.append(_label_value(lab, where))
        lines.append(n)
        prev = -1
        for k, tok in enumerate(toks[1:]):
            idx, sep, val = tok.partition(":")
            if not sep or not val or not idx:
                raise CLIError(f"{where}: the token {tok!r} is not index:value")
            if idx == "qid" and k == 0:
                if not val.isdigit():
                    raise CLIError(f"{where}: the token {tok!r}: qid must be a non-negative "
                                   "integer")
                qid = True
                continue
            if not idx.isdigit():
                raise CLIError(f"{where}: the token {tok!r}: the index {idx!r} is not a "
                               "non-negative integer")
            i = int(idx)
            if i <= prev:
                why = f"index {i} repeated" if i == prev else f"index {i} after {prev}"
                raise CLIError(f"{where}: the token {tok!r}: indices must increase along a "
                               f"line ({why})")
            prev = i
            v = _number(val, f"{where}, token {tok!r}")
            rows.append(len(labels) - 1)
            cols.append(i)
            vals.append(v)
    if not labels:
        raise CLIError(f"{what} {path} has no data rows")
    has_zero = bool(cols) and min(cols) == 0
    if zero_based is None:
        zero_based = has_zero
    elif has_zero and not zero_based:
        i = cols.index(0)
        raise CLIError(f"{what} {path}: line {lines[rows[i]]} has the index 0, but the training "
                       "data's indices start at 1 (LIBSVM format)")
    cols = np.asarray(cols, dtype=np.int64) - (0 if zero_based else 1)
    d = int(cols.max()) + 1 if cols.size else 0
    if n_features is not None:
        if d > n_features:
            i = int(np.argmax(cols))
            raise CLIError(f"{what} {path}: line {lines[rows[i]]} has the feature index "
                           f"{int(cols[i]) + (0 if zero_based else 1)}, beyond the training "
                           f"data's {n_features} features")
        d = n_features
    if d == 0:
        raise CLIError(f"{what} {path} has no features (every line holds a label only)")
    X = np.zeros((len(labels), d))
    X[np.asarray(rows, dtype=np.int64), cols] = vals
    _check_label_kinds(labels, lines, path, what)
    read.rows, read.features = len(labels), d
    if zero_based:
        read.notes.append("indices zero-based (an index 0 appears)")
    if qid:
        read.notes.append("qid fields ignored")
    read.zero_based = zero_based
    return X, np.asarray(labels), read


def _read_svmlight(path, what, n_features=None, zero_based=None):
    """``(X, y)`` of a LIBSVM/svmlight file (see :func:`_read_svmlight_text`)."""
    X, y, _ = _read_svmlight_text(_open_text(path, what), path, what, n_features, zero_based)
    return X, y


def _read_test_data_report(path, d, zero_based=None):
    """``(X_test, read)``: (n_test, d) from CSV with d feature columns (or d + 1 with a
    label last, which is ignored; a first line without any numeric cell is a header) or
    LIBSVM format (labels ignored; indices as the training data's)."""
    what = "--test-data"
    text = _open_text(path, what)
    if _is_svmlight(text):
        try:
            X, _, read = _read_svmlight_text(text, path, what, n_features=d,
                                             zero_based=zero_based)
        except CLIError as exc:
            raise CLIError(f"{exc} (the training data have {d} features)") from None
        return X, read
    read = _Read(path, "CSV")
    rows = _split_header(_csv_rows(text, path, what, read), path, what, read)
    first_line = rows[0][0] if read.header is None else None
    width = len(rows[0][1])
    if width not in (d, d + 1):
        raise CLIError(f"{what} {path}: rows must have {d} feature columns (as --data), or "
                       f"{d + 1} with a label last; got {width}")
    out = []
    for n, parts in rows:
        if len(parts) != width:
            _width_error(what, path, n, parts, width, f"the first data row has {width}")
        out.append(_features(parts[:d], what, path, n, first_line))
    read.rows, read.features = len(out), d
    return np.asarray(out, float), read


def _read_test_data(path, d):
    """``X_test`` of :func:`_read_test_data_report`."""
    return _read_test_data_report(path, d)[0]


# ---- solution files ------------------------------------------------------------------


def _load_solution_file(path, fmt):
    """The arrays of a ``.npz`` or ``.json`` solution file, by name."""
    if fmt is None:
        low = str(path).lower()
        fmt = "npz" if low.endswith(".npz") else "json" if low.endswith(".json") else None
        if fmt is None:
            raise CLIError(f"--solution {path}: give a .npz or .json file, or say which with "
                           f"--solution-format ({', '.join(_SOLUTION_FORMATS)})")
    if fmt == "npz":
        if os.path.isdir(path):
            raise CLIError(f"--solution {path}: is a directory, not a file")
        try:
            z = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise CLIError(f"--solution {path}: no such file") from None
        except Exception as exc:                        # noqa: BLE001 - any unreadable file
            why = ("not a .npz archive (as np.savez writes)" if "pickled" in str(exc)
                   else f"not a readable .npz archive: {_one_line(exc)}")
            raise CLIError(f"--solution {path}: {why}") from None
        if isinstance(z, np.ndarray):
            raise CLIError(f"--solution {path}: one unnamed .npy array, not a .npz archive of "
                           "named arrays (save with np.savez(path, coef=...))")
        try:
            with z:
                return {k: z[k] for k in z.files}
        except Exception as exc:                        # noqa: BLE001 - an unreadable member
            raise CLIError(f"--solution {path}: an array cannot be read: {_one_line(exc)}") \
                from None
    if fmt == "json":
        if _starts_with(path, _ZIP_MAGIC):
            raise CLIError(f"--solution {path}: a .npz archive (zip), not JSON: give "
                           "--solution-format npz (or leave it out for a .npz file)")
        text = _open_text(path, "--solution", expected="JSON")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CLIError(f"--solution {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise CLIError(f"--solution {path} must hold a JSON object of named arrays, e.g. "
                           '{"coef": [...], "intercept": 0.1}')
        return data
    raise CLIError(f"--solution-format must be one of {', '.join(_SOLUTION_FORMATS)}; got {fmt!r}")


def _formats_module(fmt):
    try:
        from refmodels import formats
    except ImportError:
        raise CLIError(f"--solution-format {fmt} is not available in this build (refmodels/"
                       "formats.py is missing); save the solution as .npz or .json") from None
    return formats


def _foreign_setup(args, family, X, hyper):
    """What another tool's model file says about the problem: its kernel, the constant
    column of LIBLINEAR -B / LIBODM -b, LIBSVM's intercept. Returns ``(X, kernel, notes)``."""
    fmt, path = args.solution_format, args.solution
    formats = _formats_module(fmt)
    if not os.path.isfile(path):
        raise CLIError(f"--solution {path}: no such file")
    if not hasattr(formats, "model_info"):
        return X, None, []
    info = formats.model_info(path, fmt)
    notes = []
    fam = info.get("family")
    if fam and fam != family:
        raise CLIError(f"a {fmt} model of this kind is a {fam} solution; --family says {family}")
    bias = info.get("bias")
    names = _param_names(getattr(rm, family))
    # a bias feature that is the family's regularized intercept (LIBODM -b on the linear
    # kernel): fit_intercept=True on X itself, not the augmented data
    as_param = bool(info.get("fit_intercept")) and bias is not None \
        and "intercept_scaling" in names and hyper.get("fit_intercept", True)
    if as_param:
        if "intercept_scaling" not in hyper:
            hyper["intercept_scaling"] = float(info.get("intercept_scaling", bias))
            notes.append(f"fit_intercept=True, intercept_scaling={bias:g} from the {fmt} "
                         "model (its bias feature: a constant feature, regularized)")
    elif bias is not None:
        X = formats.augment(X, bias)
        notes.append(f"X augmented with a constant last column {bias:g}, as {fmt} does with its "
                     "bias feature (regularized like the others; no separate intercept)")
    fi = info.get("fit_intercept")
    if bias is not None and not as_param:
        fi = False                    # the constant is a column of X: no intercept besides
    if fi is not None and "fit_intercept" in names:
        if "fit_intercept" not in hyper:
            hyper["fit_intercept"] = bool(fi)
            notes.append(f"fit_intercept={bool(fi)} from the {fmt} model")
        elif hyper["fit_intercept"] != bool(fi):
            raise CLIError(f"a {fmt} model has fit_intercept={bool(fi)}; --param says "
                           f"{hyper['fit_intercept']}")
    for key in ("mu", "theta"):          # LIBLINEAR -s 1 / -s 2: ODM at mu = theta = 0
        if info.get(key) is not None and key in names and key not in hyper:
            hyper[key] = float(info[key])
            notes.append(f"{key}={hyper[key]:g} from the {fmt} model (the squared hinge)")
    if info.get("C") is not None and "C" in _param_names(getattr(rm, family)) \
            and "C" not in hyper:
        hyper["C"] = float(info["C"])
        notes.append(f"C={hyper['C']:g} from the {fmt} model (the C-SVM equivalent of nu_svc)")
    kern = info.get("kernel")
    return X, (kern if isinstance(kern, rm.kernels.Kernel) else None), notes


def _load_foreign_model(path, fmt, X, y):
    formats = _formats_module(fmt)
    if not os.path.isfile(path):
        raise CLIError(f"--solution {path}: no such file")
    data = formats.load_model(path, fmt, X, y)
    if not isinstance(data, dict):
        raise CLIError(f"--solution-format {fmt}: the reader returned no arrays")
    return dict(data)


def _numeric(value, name, scalar=False):
    """A finite real float array (or float with ``scalar``) from a file's value."""
    what = f"the solution's {name!r}"
    if isinstance(value, dict):
        raise CLIError(f"{what} must be {'a number' if scalar else 'an array of numbers'}; got "
                       "an object (dict)")
    if value is None or isinstance(value, (str, bool)):
        raise CLIError(f"{what} must be {'a number' if scalar else 'an array of numbers'}; got "
                       f"{value!r}")
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):
        raise CLIError(f"{what} must be a rectangular array of numbers (rows of equal length)") \
            from None
    if a.dtype.kind == "c":
        raise CLIError(f"{what} must be real; got complex numbers")
    if a.dtype.kind == "b":
        raise CLIError(f"{what} must be numbers; got booleans")
    if a.dtype.kind not in "iuf":
        if a.dtype.kind == "O":
            raise CLIError(f"{what} must be a rectangular array of numbers (got nested lists of "
                           "unequal length, null or mixed values)")
        raise CLIError(f"{what} must be numbers; got {a.dtype.kind == 'U' and 'strings' or a.dtype}")
    a = a.astype(float)
    if not np.all(np.isfinite(a)):
        raise CLIError(f"{what} must contain only finite numbers (found NaN or inf)")
    if scalar:
        if a.size != 1:
            raise CLIError(f"{what} must be one number; got {a.size} values (shape {a.shape})")
        return float(a.ravel()[0])
    return a


def _solution_kwargs(prob, family, data, hyper):
    """Keyword arguments of ``prob.solution_from`` from a solution file's named arrays."""
    sig = inspect.signature(prob.solution_from).parameters
    takes_extra = any(p.kind == p.VAR_KEYWORD for p in sig.values())
    # the dual variables a solution file may name: the problem's own, or those its
    # ``solution_from`` takes for another problem it is certified through (McODM: the
    # relaxed QP's)
    dual_names = tuple(getattr(prob, "solution_dual_names", None)
                       or getattr(prob, "dual_names", ()) or ())
    slacks = tuple(getattr(prob, "primal_slack_names", ())) if takes_extra else ()
    direct = [n for n in sig if n not in ("dual", "source")
              and sig[n].kind != sig[n].VAR_KEYWORD]
    data = dict(data)
    source = data.pop("source", None) if isinstance(data.get("source"), str) else None
    nested = data.pop("dual", None)
    if nested is not None:
        if not isinstance(nested, dict):
            raise CLIError("the solution's 'dual' must be an object of dual variables by name "
                           f"{list(dual_names)}")
        for k, v in nested.items():
            if k in data:
                raise CLIError(f"the solution gives {k!r} twice (top level and in 'dual')")
            data[k] = v
    if "b" in data and "b" not in dual_names and "b" not in direct:
        if "intercept" in data:
            raise CLIError("the solution gives both 'b' and 'intercept'; give one")
        data["intercept"] = data.pop("b")
    # an intercept where the problem has none
    if "intercept" in data:
        b = _numeric(data["intercept"], "intercept", scalar=True)
        data["intercept"] = b
        if not (getattr(prob, "has_intercept", False) or getattr(prob, "fit_intercept", False)):
            if b != 0.0:
                if "fit_intercept" in _param_names(type(prob)):
                    raise CLIError(f"the solution has an intercept ({b:g}) but {family} is set up "
                                   f"without one (fit_intercept={hyper.get('fit_intercept', False)}"
                                   "): pass --param fit_intercept=true")
                raise CLIError(f"the solution has an intercept ({b:g}) but {family} has none "
                               "(f(x) = sum_i coef_i k(x_i, x)); drop it from the solution file")
            data.pop("intercept")
    known = [*direct, *dual_names, *slacks]
    if "intercept" in direct or "intercept" in data:
        known_show = known + ["b (= intercept)"]
    else:
        known_show = known
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise CLIError(f"the solution file has unknown arrays {unknown}; {family} takes some of "
                       f"{known_show}")
    if not data:
        raise CLIError(f"the solution file holds no arrays; give at least one of "
                       f"{[n for n in direct if n not in ('intercept', 'M', 'xi', 'eps')]} "
                       f"or the dual variables {list(dual_names)}")
    kw, dual = {}, {}
    for k, v in data.items():
        if k == "intercept":
            kw[k] = v
        elif k in dual_names and k not in direct:
            dual[k] = _numeric(v, k)
        else:
            kw[k] = _numeric(v, k)
    if dual:
        kw["dual"] = dual
    if source is not None and "source" in sig:
        kw["source"] = source                # a model file's reader: the library's name
    return kw
