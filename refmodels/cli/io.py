"""Reading the files ``refmodels certify`` takes: the data (CSV with the label last, or
LIBSVM/svmlight), the test points of DRR/DRM, and the solution (``.npz`` or ``.json`` with
named arrays, or another tool's model file through :mod:`refmodels.formats`), turned into
the keyword arguments of ``prob.solution_from``. Every malformed input is a
:class:`CLIError` naming the file, the line and the rule."""
from __future__ import annotations

import inspect
import json
import math
import os
import warnings

import numpy as np

import refmodels as rm

from ._common import CLIError, _looks_complex, _one_line, _param_names

#: the solution files --solution-format names
_SOLUTION_FORMATS = ("npz", "json", "libsvm", "liblinear", "libodm")


# ---- data files ----------------------------------------------------------------------


def _open_text(path, what):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise CLIError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{what} {path}: is a directory, not a file") from None
    except UnicodeDecodeError:
        raise CLIError(f"{what} {path}: not a text file (CSV or LIBSVM format)") from None
    except OSError as exc:
        raise CLIError(f"{what} {path}: {exc.strerror or exc}") from None


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


def _csv_rows(text, path, what):
    """Rows of a CSV file as lists of stripped strings, with their line numbers."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "@")):
            continue
        rows.append((n, [p.strip() for p in line.split(",")]))
    if not rows:
        raise CLIError(f"{what} {path} has no data rows")
    return rows


def _number(s, where):
    try:
        v = float(s)
    except ValueError:
        if s and _looks_complex(s):
            raise CLIError(f"{where}: {s!r} is a complex number (features must be real)") from None
        raise CLIError(f"{where}: {s!r} is not a number") from None
    if not math.isfinite(v):
        raise CLIError(f"{where}: {s!r} is not finite (features must be finite)")
    return v


def _read_data(path, what="--data"):
    """``(X, y)`` from CSV (label in the last column; a non-numeric first line is a header)
    or LIBSVM/svmlight format."""
    text = _open_text(path, what)
    if _is_svmlight(text):
        X, y = _read_svmlight(path, what)
        return X, np.asarray([_label_value(_fmt_num(v), f"{what} {path}: label") for v in y])
    rows = _csv_rows(text, path, what)
    n0, first = rows[0]
    try:
        [float(p) for p in first[:-1]]
    except ValueError:
        rows = rows[1:]                                  # a header line
        if not rows:
            raise CLIError(f"{what} {path} has a header line but no data rows")
    width = len(rows[0][1])
    if width < 2:
        raise CLIError(f"{what} {path}: a row needs at least one feature and the label (last "
                       f"column); line {rows[0][0]} has {width} column")
    X, y = [], []
    for n, parts in rows:
        if len(parts) != width:
            raise CLIError(f"{what} {path}: line {n} has {len(parts)} columns; the first data "
                           f"row has {width}")
        X.append([_number(p, f"{what} {path}: line {n}, column {j + 1}")
                  for j, p in enumerate(parts[:-1])])
        y.append(_label_value(parts[-1], f"{what} {path}: line {n}"))
    return np.asarray(X, float), np.asarray(y)


def _fmt_num(v):
    v = float(v)
    return repr(int(v)) if math.isfinite(v) and v == int(v) else repr(v)


def _read_svmlight(path, what, n_features=None):
    from sklearn.datasets import load_svmlight_file

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X, y = load_svmlight_file(str(path), n_features=n_features)
    except Exception as exc:                            # noqa: BLE001 - any parse failure
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CLIError(f"{what} {path} is not valid LIBSVM/svmlight format: {msg}") from None
    X = X.toarray()
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise CLIError(f"{what} {path} has no data")
    if not np.all(np.isfinite(X)):
        raise CLIError(f"{what} {path}: features must be finite (found NaN or inf)")
    return X, y


def _read_test_data(path, d):
    """``X_test`` (n_test, d): CSV with d feature columns (or d + 1 with a label last, which is
    ignored) or LIBSVM format (labels ignored)."""
    what = "--test-data"
    text = _open_text(path, what)
    if _is_svmlight(text):
        try:
            X, _ = _read_svmlight(path, what, n_features=d)
        except CLIError as exc:
            raise CLIError(f"{exc} (the training data have {d} features)") from None
        return X
    rows = _csv_rows(text, path, what)
    width = len(rows[0][1])
    try:
        [float(p) for p in rows[0][1][:d]]
    except ValueError:
        rows = rows[1:]
        if not rows:
            raise CLIError(f"{what} {path} has a header line but no data rows")
        width = len(rows[0][1])
    if width not in (d, d + 1):
        raise CLIError(f"{what} {path}: rows must have {d} feature columns (as --data), or "
                       f"{d + 1} with a label last; got {width}")
    out = []
    for n, parts in rows:
        if len(parts) != width:
            raise CLIError(f"{what} {path}: line {n} has {len(parts)} columns; the first data "
                           f"row has {width}")
        out.append([_number(p, f"{what} {path}: line {n}, column {j + 1}")
                    for j, p in enumerate(parts[:d])])
    return np.asarray(out, float)


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
        text = _open_text(path, "--solution")
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
    if bias is not None:
        X = formats.augment(X, bias)
        notes.append(f"X augmented with a constant last column {bias:g}, as {fmt} does with its "
                     "bias feature (regularized like the others; no separate intercept)")
    fi = info.get("fit_intercept")
    if fi is not None and "fit_intercept" in _param_names(getattr(rm, family)):
        if "fit_intercept" not in hyper:
            hyper["fit_intercept"] = bool(fi)
            notes.append(f"fit_intercept={bool(fi)} from the {fmt} model")
        elif hyper["fit_intercept"] != bool(fi):
            raise CLIError(f"a {fmt} model has fit_intercept={bool(fi)}; --param says "
                           f"{hyper['fit_intercept']}")
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
    if family == "McODM":
        dual_names = tuple(rm.RelaxedMcODM.dual_names)
    else:
        dual_names = tuple(getattr(prob, "dual_names", ()) or ())
    slacks = tuple(getattr(prob, "primal_slack_names", ())) if takes_extra else ()
    direct = [n for n in sig if n not in ("dual",) and sig[n].kind != sig[n].VAR_KEYWORD]
    data = dict(data)
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
        if not getattr(prob, "has_intercept", False):
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
    return kw
