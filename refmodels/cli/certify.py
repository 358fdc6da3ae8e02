"""``refmodels certify``: a family with its hyperparameters (``--param``) and kernel, a data
file and a solution file from any solver; prints the KKT certificate (or JSON). Exit
status 0 when it holds, 1 when it fails, 2 on bad input."""
from __future__ import annotations

import argparse
import inspect
import json
import math
import re
import sys

import numpy as np

from refmodels import registry as _registry

from ._common import (CLIError, _describe, _json_safe, _looks_complex, _param_names,
                      families, with_capability)
from .io import (_foreign_setup, _load_foreign_model, _load_solution_file, _read_data_report,
                 _read_test_data_report, _solution_kwargs)


_KERNEL_PARAMS = {"linear": (), "rbf": ("gamma",), "poly": ("degree", "gamma", "coef0"),
                  "precomputed": ()}
_KERNEL_ALIASES = {"polynomial": "poly"}
_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


# ---- hyperparameters -----------------------------------------------------------------


def _resolve_family(name):
    known = families()
    match = [f for f in known if f.lower() == str(name).strip().lower()]
    if not match:
        raise CLIError(f"--family must be one of {', '.join(known)} (case-insensitive); "
                       f"got {name!r}")
    return match[0]


def _parse_bool(text, name):
    v = _BOOL_WORDS.get(text.strip().lower())
    if v is None:
        raise CLIError(f"{name} must be a boolean (true/false, 1/0, yes/no); got {text!r}")
    return v


def _parse_number_or_word(text):
    s = text.strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def _parse_params(family, cls, items):
    valid = _param_names(cls)
    names = ", ".join(valid) if valid else "(none)"
    hyper = {}
    for item in items or []:
        if "=" not in item:
            raise CLIError(f"--param takes name=value; got {item!r} (valid names for {family}: "
                           f"{names})")
        k, v = (s.strip() for s in item.split("=", 1))
        if k in ("kernel", "kernels", "gamma", "degree", "coef0"):
            hint = ("--base-kernel" if with_capability("base_kernels", (family,)) else
                    "--kernel" if k == "kernel" else f"--kernel and --{k}")
            raise CLIError(f"--param {k}=...: give the kernel with {hint}, not --param")
        if k not in valid:
            raise CLIError(f"--param: {family} has no parameter {k!r}; valid names: {names}")
        if k in hyper:
            raise CLIError(f"--param {k} given twice")
        if v == "":
            raise CLIError(f"--param {k}= needs a value")
        default = valid[k].default
        if isinstance(default, bool) or k.startswith("fit_"):
            hyper[k] = _parse_bool(v, f"--param {k}")
        else:
            val = _parse_number_or_word(v)
            if isinstance(val, str) and not (isinstance(default, str)):
                low = val.lower()
                if low in _BOOL_WORDS or "j" in low and _looks_complex(val):
                    raise CLIError(f"--param {k} must be a real number; got {v!r}")
            hyper[k] = val
    missing = [n for n, p in valid.items() if p.default is inspect.Parameter.empty
               and n not in hyper]
    if missing:
        raise CLIError(f"{family} needs {', '.join('--param ' + n + '=...' for n in missing)} "
                       f"(valid names: {names})")
    return hyper


def _positive_arg(text, expected="a finite number > 0"):
    """``float(text)``, which must be finite and > 0 (argparse ``type``)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text!r}")
    return v


def _gamma_arg(text):
    low = text.strip().lower()
    if low in ("scale", "auto"):
        return low
    return _positive_arg(text, "a number > 0, 'scale' or 'auto'")


def _tol_arg(text):
    return _positive_arg(text)


class ReferenceFlag(argparse.BooleanOptionalAction):
    """``--reference`` / ``--no-reference``; both on one command line contradict each other
    and are refused (argparse's own action lets the last one win silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = getattr(namespace, "_reference_flag", None)
        if given is not None and given != option_string:
            parser.error(f"{given} and {option_string} contradict each other; give one")
        namespace._reference_flag = option_string
        super().__call__(parser, namespace, values, option_string)


# ---- kernels -------------------------------------------------------------------------


def _resolve_gamma(gamma, X, where):
    """``gamma`` as scikit-learn resolves it: ``"scale"`` is ``1 / (d * X.var())`` (1 when X
    has zero variance), ``"auto"`` is ``1 / d``. Returns ``(value, note or None)``."""
    if not isinstance(gamma, str):
        return float(gamma), None
    d = X.shape[1]
    if gamma == "auto":
        return 1.0 / d, f"{where}: gamma='auto' = 1/d = 1/{d} = {1.0 / d:.6g}"
    with np.errstate(all="ignore"):
        var = float(np.var(X))
    if var > 0 and math.isfinite(var):
        val = 1.0 / (d * var)
        return val, (f"{where}: gamma='scale' = 1/(d * X.var()) = 1/({d} * {var:.6g}) = "
                     f"{val:.6g} (scikit-learn's default)")
    return 1.0, f"{where}: gamma='scale' with X.var() = 0: gamma = 1 (as scikit-learn)"


def _make_kernel(name, params, X, where):
    """A kernel from its name and parameters (``gamma`` may be 'scale' / 'auto' / absent).
    Returns ``(kernel, notes)``."""
    name = _KERNEL_ALIASES.get(name, name)
    if name not in _KERNEL_PARAMS:
        raise CLIError(f"{where} must be one of linear, rbf, poly; got {name!r}")
    allowed = _KERNEL_PARAMS[name]
    for k in params:
        if k not in allowed:
            takes = (f"takes {', '.join(allowed)}" if allowed else "takes no parameters")
            raise CLIError(f"{k} does not apply to the {name} kernel ({where}: {name} {takes})")
    notes = []
    kw = dict(params)
    if "gamma" in allowed:
        g, note = _resolve_gamma(kw.get("gamma", "scale"), X, where)
        kw["gamma"] = g
        if note:
            notes.append(note)
    if name == "poly":
        if "degree" not in params:
            kw["degree"] = 3
            notes.append(f"{where}: degree not given: 3 (the default, as scikit-learn)")
        if "coef0" not in params:
            kw["coef0"] = 1.0
            notes.append(f"{where}: coef0 not given: 1 (refmodels' default; scikit-learn's is 0)")
    from refmodels.kernels import make_kernel
    try:
        kern = make_kernel(name, **kw)
    except ValueError as exc:
        raise CLIError(f"{where}: {exc}") from None
    return kern, notes


def _parse_base_kernel(spec, X):
    """``rbf:gamma=0.5``, ``linear``, ``poly:degree=2,gamma=1,coef0=1``."""
    name, _, rest = spec.strip().partition(":")
    name = _KERNEL_ALIASES.get(name.strip().lower(), name.strip().lower())
    params = {}
    if rest.strip():
        for part in rest.split(","):
            if "=" not in part:
                raise CLIError(f"--base-kernel {spec!r}: parameters are name=value, separated by "
                               "commas (e.g. rbf:gamma=0.5 or poly:degree=2,gamma=1,coef0=1)")
            k, v = (s.strip() for s in part.split("=", 1))
            if k in params:
                raise CLIError(f"--base-kernel {spec!r}: {k} given twice")
            if k == "degree":
                try:
                    params[k] = int(v)
                except ValueError:
                    raise CLIError(f"--base-kernel {spec!r}: degree must be an integer >= 1; "
                                   f"got {v!r}") from None
            elif k == "gamma" and v.lower() in ("scale", "auto"):
                params[k] = v.lower()
            else:
                try:
                    params[k] = float(v)
                except ValueError:
                    raise CLIError(f"--base-kernel {spec!r}: {k} must be a number; got {v!r}") \
                        from None
    return _make_kernel(name, params, X, f"--base-kernel {spec}")


# ---- data --------------------------------------------------------------------------


def _check_matrix(X, option, path):
    """The package's rules for a data matrix (finite entries whose squared norms do not
    overflow), as bad input naming the file."""
    from refmodels._validation import check_X

    try:
        check_X(X, "X" if option == "--data" else "X_test")
    except ValueError as exc:
        raise CLIError(f"{option} {path}: {exc}") from None


def _name_the_file(exc, args, hyper=None):
    """A problem's ValueError about ``X`` / ``X_test`` / ``y`` with the file it came from,
    or about a hyperparameter with the ``--param`` that gave it."""
    msg = _describe(exc)
    for k, v in (hyper or {}).items():
        if re.match(rf"{re.escape(k)}\b", msg):
            return f"--param {k}={v}: {msg}"
    if re.match(r"X_test\b", msg) and getattr(args, "test_data", None):
        return f"--test-data {args.test_data}: {msg}"
    if re.match(r"X\b", msg):
        return f"--data {args.data}: {msg}"
    if re.match(r"y\b", msg):
        return f"--data {args.data} (the labels, last column): {msg}"
    return msg


# ---- output --------------------------------------------------------------------------


def _fmt_value(v, verbose):
    if np.ndim(v) == 0:
        try:
            return f"{float(v):.12g}"
        except (TypeError, ValueError):
            return str(v)
    a = np.asarray(v, float)
    if verbose:
        return np.array2string(a, precision=10, threshold=sys.maxsize, max_line_width=100)
    if a.size == 0:
        return "[]"
    return (f"{a.size} values: sum {np.sum(a):.12g}, min {np.min(a):.6g}, max {np.max(a):.6g} "
            "(--verbose for all)")


def _certificate_text(cert, problem, ref_info, verbose):
    worst_name, worst = cert.worst
    lines = [f"{problem['family']} on {problem['data']} ({problem['m']} points, "
             f"{problem['d']} features"
             + (f", {problem['n_test']} test points" if "n_test" in problem else "") + ")",
             f"  parameters: {problem['params'] or '(defaults)'}",
             f"  kernel:     {problem['kernel']}"]
    lines += [f"  read:       {r['summary']}" for r in problem.get("read", ())]
    verdict = "HOLDS" if cert.ok else "FAILS"
    line = f"KKT certificate {verdict} at tol={cert.tol:g} on scaled residuals"
    if cert.residuals and worst_name is not None:
        line += f"; worst: {worst_name} {abs(worst):.2e}"
        if not cert.ok and math.isfinite(worst):
            line += f"; it would hold at tol >= {abs(worst) * (1 + 1e-9):.2g}"
    lines.insert(0, line)
    for k, v in cert.values.items():
        if v is None or (k in ("objective_unit", "relative_gap") and not cert.unit_matters()):
            continue
        lines.append(f"  {k.replace('_', ' '):<22s} {_fmt_value(v, verbose)}")
    if ref_info.startswith("unavailable"):
        lines.append(f"  reference {ref_info} (judged without the objective gap)")
    else:
        lines.append(f"  reference optimum:     {ref_info}")
    lines += cert.residual_lines()
    if verbose and getattr(cert, "dual", None):
        for k, v in cert.dual.items():
            lines.append(f"  dual {k}: {_fmt_value(v, True)}")
    return "\n".join(lines)


def _certify_with_reference(prob, sol, tol, want):
    """``prob.certify`` with the reference optimum when ``want``; a reference that cannot be
    computed is reported, and the certificate judged without it."""
    if not want:
        return prob.certify(sol, tol=tol, reference=False), "not computed (--no-reference)", None
    try:
        cert = prob.certify(sol, tol=tol, reference=True)
    except Exception as first:                           # noqa: BLE001 - retried without it
        if isinstance(first, (KeyboardInterrupt, MemoryError)):
            raise
        if isinstance(first, ValueError):
            # bad input (a kernel that overflows on X, say): certify raises it in Python
            # too, so the command line says the same (exit status 2), not "unavailable"
            raise
        cert = prob.certify(sol, tol=tol, reference=False)  # bad input raises again here
        reason = _describe(first)
        cert.notes.insert(0, f"reference unavailable: {reason}; the certificate is judged "
                             "without the objective gap")
        return cert, f"unavailable: {reason}", reason
    for n in cert.notes:                                 # a certify that reports it itself
        if "reference unavailable" in n or "reference optimum unavailable" in n:
            hit = re.search(r"unavailable \((.*)\);", n)
            reason = hit.group(1) if hit else n
            return cert, f"unavailable: {reason}", reason
    return cert, "computed (CVXPY)", None


# ---- the command ---------------------------------------------------------------------


def cmd_certify(args):
    family = _resolve_family(args.family)
    cls = _registry.get(family).problem_class()
    is_mkl = bool(with_capability("base_kernels", (family,)))
    is_drr = bool(with_capability("test_points", (family,)))
    hyper = _parse_params(family, cls, args.param)
    # options that apply to some families only
    if is_mkl:
        if args.kernel is not None or any(getattr(args, k) is not None
                                          for k in ("gamma", "degree", "coef0")):
            raise CLIError(f"{family} takes its base kernels with --base-kernel (repeatable, e.g. "
                           "--base-kernel linear --base-kernel rbf:gamma=0.5), not --kernel/"
                           "--gamma/--degree/--coef0")
        if not args.base_kernel:
            raise CLIError(f"{family} needs its base kernels: --base-kernel SPEC (repeatable), "
                           "e.g. --base-kernel linear --base-kernel rbf:gamma=0.5")
    elif args.base_kernel:
        raise CLIError(f"--base-kernel applies to MKLm and EpsMKL only; {family} takes --kernel")
    if is_drr and not args.test_data:
        raise CLIError(f"{family} needs --test-data FILE (the test points X_test)")
    if not is_drr and args.test_data:
        raise CLIError(f"--test-data applies to DRR and DRM only; {family} is not transductive")
    X, y, read = _read_data_report(args.data)
    _check_matrix(X, "--data", args.data)
    reads = [read]
    notes = []
    foreign = args.solution_format in ("libsvm", "liblinear", "libodm")
    model_kernel = None
    if foreign:
        X, model_kernel, fnotes = _foreign_setup(args, family, X, hyper)
        notes += fnotes
    if is_mkl:
        kernels = []
        for spec in args.base_kernel:
            k, kn = _parse_base_kernel(spec, X)
            kernels.append(k)
            notes += kn
        kw = {"kernels": kernels}
        kernel_desc = ", ".join(repr(k) for k in kernels)
    else:
        name = (args.kernel or "linear").strip().lower()
        kparams = {k: getattr(args, k) for k in ("gamma", "degree", "coef0")
                   if getattr(args, k) is not None}
        for k in kparams:
            if k not in _KERNEL_PARAMS.get(_KERNEL_ALIASES.get(name, name), ("gamma", "degree",
                                                                             "coef0")):
                allowed = _KERNEL_PARAMS[_KERNEL_ALIASES.get(name, name)]
                takes = (", ".join("--" + a for a in allowed) if allowed else "no parameters")
                raise CLIError(f"--{k} does not apply to --kernel {name} (it takes {takes})")
        if model_kernel is not None and args.kernel is None and not kparams:
            kern = model_kernel
            notes.append(f"kernel {kern!r} from the model file")
        else:
            kern, knotes = _make_kernel(name, kparams, X, "--kernel " + name)
            notes += knotes
            if model_kernel is not None and kern != model_kernel:
                raise CLIError(f"the model file was trained with the kernel {model_kernel!r}; "
                               f"--kernel and its options give {kern!r} (omit them to use the "
                               "model's)")
        kw = {"kernel": kern}
        kernel_desc = repr(kern)
    if is_drr:
        kw["X_test"], tread = _read_test_data_report(args.test_data, X.shape[1],
                                                     zero_based=read.zero_based)
        _check_matrix(kw["X_test"], "--test-data", args.test_data)
        reads.append(tread)
    try:
        prob = cls(X, y, **kw, **hyper)
    except TypeError as exc:                             # should not happen: names are checked
        raise CLIError(f"--param: {exc}; valid names: {', '.join(_param_names(cls))}") from None
    except ValueError as exc:
        raise CLIError(_name_the_file(exc, args, hyper)) from None
    if foreign:
        data = _load_foreign_model(args.solution, args.solution_format, X, y)
    else:
        data = _load_solution_file(args.solution, args.solution_format)
    foreign_b = None
    if getattr(args, "diagnose", False) and not getattr(prob, "has_intercept", True):
        foreign_b = _pop_intercept(data)          # diagnosed (a free intercept?), not refused
    skw = _solution_kwargs(prob, family, data, hyper)
    sol = prob.solution_from(**skw)
    if foreign_b:
        from refmodels.diagnose import with_foreign_intercept

        with_foreign_intercept(prob, sol, foreign_b)
    from refmodels.base import AUTO_REFERENCE_MAX_M
    m = prob.m
    if args.reference is None:
        want = m <= AUTO_REFERENCE_MAX_M
        why = "" if want else (f"not computed (m={m} > {AUTO_REFERENCE_MAX_M}; --reference to "
                               "compute it)")
    else:
        want, why = bool(args.reference), ""
    cert, ref_info, _ = _certify_with_reference(prob, sol, args.tol, want)
    if why:
        ref_info = why
    if foreign_b:
        cert.add("intercept (none here)", abs(foreign_b),
                 1.0 + float(np.max(np.abs(prob.decision_function(sol, prob.X)),
                                        initial=0.0)))
    diagnosis = None
    if getattr(args, "diagnose", False) and not cert.ok:
        diagnosis = _diagnose(cert)
    cert.notes.extend(notes)
    shown = []
    for k, p in _param_names(cls).items():
        if k in hyper:
            shown.append(f"{k}={hyper[k]}")
        elif p.default is not inspect.Parameter.empty:
            shown.append(f"{k}={p.default} (default)")
    if any("gamma='scale'" in n or "gamma='auto'" in n for n in notes):
        kernel_desc += "  (gamma resolved as scikit-learn does; see the note)"
    problem = {"family": family, "data": str(args.data), "m": int(m), "d": int(X.shape[1]),
               "params": ", ".join(shown), "kernel": kernel_desc,
               "read": [{"summary": r.summary(), **r.to_dict()} for r in reads]}
    if is_drr:
        problem["n_test"] = int(kw["X_test"].shape[0])
    rc = 0 if cert.ok else 1
    args._verdict = rc
    if args.json:
        out = cert.to_dict()
        out["problem"] = problem
        out["reference"] = ref_info
        out["exit_status"] = rc
        if diagnosis is not None:
            out["diagnosis"] = diagnosis.to_dict()
        print(json.dumps(_json_safe(out), indent=1))
    else:
        print(_certificate_text(cert, problem, ref_info, args.verbose))
        if diagnosis is not None:
            print("diagnosis:")
            for line in str(diagnosis).splitlines():
                print(f"  {line}")
    return rc


def _pop_intercept(data):
    """The non-zero intercept (``intercept`` or ``b``) of a solution file, removed from
    ``data``, or None."""
    for key in ("intercept", "b"):
        if key in data:
            try:
                b = float(np.asarray(data[key], dtype=float).ravel()[0])
            except (TypeError, ValueError, IndexError):
                return None
            if b != 0.0 and math.isfinite(b):
                data.pop(key)
                return b
    return None


def _diagnose(cert):
    """``cert.diagnose()``; a diagnosis that cannot run says why instead of failing."""
    try:
        return cert.diagnose()
    except (ValueError, NotImplementedError) as exc:
        from refmodels.diagnose import Diagnosis

        return Diagnosis(cert, [], [], f"no diagnosis: {_describe(exc)}")
