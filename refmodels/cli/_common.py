"""What every subcommand shares: the family names, :class:`CLIError` (bad input: exit
status 2, one line), one-line descriptions of exceptions, a family's hyperparameter names
and JSON-safe output."""
from __future__ import annotations

import inspect
import math

import numpy as np

from refmodels import registry as _registry

PROG = "refmodels"

def families():
    """Every family ``certify`` takes, by its class name: the registry's with
    ``command_line`` (now, including families registered after import)."""
    return tuple(n for n, f in _registry.FAMILIES.items() if f.command_line)


def with_capability(capability, names=None):
    """The families (of ``names``, default :func:`families`) whose class declares
    ``capability`` (``"base_kernels"``, ``"test_points"``)."""
    return tuple(n for n in (families() if names is None else names)
                 if capability in getattr(_registry.FAMILIES[n].problem_class(),
                                          "capabilities", ()))


#: every family ``certify`` takes, by its class name in :mod:`refmodels` (at import:
#: :func:`families` sees families registered later)
FAMILIES = families()
_FAMILY_NAMES = FAMILIES                    # former name, kept for importers
#: the families given base kernels (``--base-kernel``) and test points (``--test-data``)
_MKL = with_capability("base_kernels")
_TRANSDUCTIVE = with_capability("test_points")
#: constructor arguments that are not hyperparameters (given by other options)
_NOT_PARAMS = {"self", "X", "y", "X_test", "kernel", "kernels", "regularizer"}
#: exit status after a closed output pipe, when no verdict was reached (128 + SIGPIPE)
EXIT_PIPE = 141


class CLIError(ValueError):
    """Bad input on the command line (exit status 2, one-line message)."""


def _one_line(exc):
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def _describe(exc):
    """A one-line description of an exception for an error message."""
    if isinstance(exc, (CLIError,)):
        return _one_line(exc)
    if isinstance(exc, OSError) and getattr(exc, "filename", None):
        return f"{exc.filename}: {exc.strerror or _one_line(exc)}"
    name = type(exc).__name__
    if isinstance(exc, ValueError) and name == "ValueError":
        return _one_line(exc)
    if isinstance(exc, (np.linalg.LinAlgError, ArithmeticError)):
        return (f"numerical failure ({name}: {_one_line(exc)}); features or kernel values of "
                "very different scales are the usual cause: scale the features")
    return f"{name}: {_one_line(exc)}"


def _param_names(cls):
    sig = inspect.signature(cls.__init__)
    return {n: p for n, p in sig.parameters.items()
            if n not in _NOT_PARAMS and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _looks_complex(s):
    try:
        complex(s)
    except ValueError:
        return False
    return True


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _json_safe(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if obj is None or isinstance(obj, (int, str)):
        return obj
    return str(obj)
