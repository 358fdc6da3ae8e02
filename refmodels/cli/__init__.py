"""Command line: refmodels verify (the main job), refmodels certify, refmodels check-solver
and refmodels derive.

verify solves every family's primal and dual on built-in data, certifies both and
prints one row per family and kernel as it finishes; with the fast solvers present it
adds their columns (the one place where refmodels reaches into fast, lazily).
Exit status 1 if any certificate fails.

certify takes a data file, a family with its hyperparameters and kernel, and a
solution file from any solver, and prints the KKT certificate. Exit status 0 when it
holds, 1 when it fails, 2 on bad input (with a one-line message, never a traceback;
set REFMODELS_DEBUG=1 to see one).

Layout: this module holds :func:`main` and the argument parser; :mod:`.verify` and
:mod:`.certify` the two commands; :mod:`.io` the data and solution files; :mod:`._common`
the family names, :class:`CLIError` and the error descriptions they share. ``derive``
comes from :mod:`refmodels.derive` when it is present. The former module's names stay
importable from here.
"""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import traceback
import warnings

import refmodels as rm

from ._common import (_FAMILY_NAMES, _MKL, _NOT_PARAMS, _TRANSDUCTIVE, EXIT_PIPE,  # noqa: F401
                      FAMILIES, PROG, CLIError, _describe, _json_safe, _looks_complex,
                      _one_line, _param_names, families)
from .certify import (_BOOL_WORDS, _KERNEL_ALIASES, _KERNEL_PARAMS,  # noqa: F401
                      ReferenceFlag, _certificate_text, _certify_with_reference, _fmt_value,
                      _gamma_arg, _make_kernel, _parse_base_kernel, _parse_bool,
                      _parse_number_or_word, _parse_params, _resolve_family, _resolve_gamma,
                      _tol_arg, cmd_certify)
from .io import (_NONFINITE, _SOLUTION_FORMATS, _csv_rows, _fmt_num,  # noqa: F401
                 _foreign_setup, _formats_module, _is_svmlight, _label_value,
                 _load_foreign_model, _load_solution_file, _number, _numeric, _open_text,
                 _read_data, _read_svmlight, _read_test_data, _solution_kwargs)
from .verify import (_COLS, _binary_data, _case, _cases, _fast_available,  # noqa: F401
                     _fast_cache_cold, _fast_columns, _fmt_param, _legend, _print_table,
                     _Progress, _row_head, _row_line, _select_families, _verify_families,
                     _verify_row, cmd_verify)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (exit status 2) instead of the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_DERIVE_ERROR = None


def _derive_module():
    global _DERIVE_ERROR
    try:
        from refmodels import derive
    except Exception as exc:                             # noqa: BLE001 - absent or broken
        _DERIVE_ERROR = _describe(exc)
        return None
    if not (hasattr(derive, "add_parser") and hasattr(derive, "run")):
        _DERIVE_ERROR = "refmodels/derive.py has no add_parser/run"
        return None
    return derive


def _cmd_derive_missing(args):
    raise CLIError(f"derive is not available in this build ({_DERIVE_ERROR})")


CERTIFY_EPILOG = f"""\
families and their parameters (--param NAME=VALUE):
{{families}}

kernels: --kernel linear | rbf [--gamma G] | poly [--degree D] [--gamma G] [--coef0 C].
  --gamma defaults to 'scale' = 1/(d * X.var()) as in scikit-learn, and the value used is
  printed. MKLm and EpsMKL take --base-kernel instead (repeatable): linear, rbf:gamma=0.5,
  poly:degree=2,gamma=1,coef0=1. Booleans: true/false, 1/0, yes/no.

solution file (.npz or .json): w (linear kernel) or coef (over the training points),
  intercept (or b), dual variables by their SPEC names (alpha, beta, zeta, z, ...), slacks;
  McODM: coef (m x k) or W (d x k, linear kernel), M; MKLm/EpsMKL: mu, coef, intercept;
  DRR/DRM: coef or W (m x n_test) with --test-data FILE.

reference optimum: computed when m <= 2000 (as certify in Python), or as --reference /
  --no-reference say; when it cannot be computed the certificate says why and is judged
  without it.

exit status: 0 the certificate holds, 1 it fails, 2 bad input (one line on stderr).

example:
  {PROG} certify --data train.csv --family ODM --param lam=1 --param mu=0.5 \\
      --param theta=0.3 --kernel rbf --gamma 0.5 --solution mine.npz --json
"""


def _families_help():
    lines = []
    for f in families():
        try:
            cls = rm.registry.FAMILIES[f].problem_class()
            ps = _param_names(cls)
        except Exception:                                # noqa: BLE001
            continue
        desc = ", ".join(n if p.default is inspect.Parameter.empty else f"{n}={p.default}"
                         for n, p in ps.items())
        lines.append(f"  {f:<7} {desc}")
    return "\n".join(lines)


def _wrap(text):
    import textwrap

    return textwrap.fill(text, width=88)


def build_parser():
    p = _Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
                description=_wrap("Reference (CVXPY) solutions and KKT certificates for the "
                                  "margin-distribution classifiers and discriminative ridge "
                                  "regression."),
                epilog="exit status: 0 success / the certificate holds, 1 a certificate fails, "
                       "2 bad input.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{verify,certify,check-solver"
                           + (",derive" if _derive_module() else "") + "}")
    vf = ", ".join(_verify_families())
    v = sub.add_parser("verify", help="solve and certify every family on built-in data",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=_wrap("Solve every family's primal and dual on built-in "
                                         "data with the reference (CVXPY), certify both, and "
                                         "(unless --no-fast) the fast solver too. One row per "
                                         "family and kernel, printed as it finishes; a legend "
                                         "at the end. Exit 1 if any certificate fails."))
    v.add_argument("--family", action="append", metavar="NAME",
                   help=f"only these families (repeatable or comma-separated, case-insensitive): "
                        f"{vf}")
    v.add_argument("--no-fast", action="store_true", help="reference columns only")
    v.add_argument("--json", action="store_true", help="the rows as JSON")
    v.add_argument("--jobs", type=int, metavar="N",
                   help="processes for the rows: 1 runs them here (default: 2 when two "
                        "cores and fork are available)")
    v.set_defaults(func=cmd_verify)

    c = sub.add_parser("certify", help="certify a solution file from any solver",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=_wrap("Certify a solution of one family on a data file: "
                                         "KKT residuals, duality gap and the gap to the "
                                         "reference optimum, in SPEC's canonical scaling."),
                       epilog=CERTIFY_EPILOG.format(families=_families_help()))
    c.add_argument("--data", required=True, metavar="FILE",
                   help="training data: CSV (label in the last column) or LIBSVM format")
    c.add_argument("--family", required=True, metavar="NAME",
                   help=f"one of {', '.join(families())} (case-insensitive)")
    c.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a hyperparameter by its SPEC name, e.g. --param lam=1 (repeatable)")
    c.add_argument("--kernel", metavar="NAME", help="linear (default), rbf or poly")
    c.add_argument("--gamma", type=_gamma_arg, metavar="G",
                   help="rbf/poly: a number > 0, or 'scale' (default) or 'auto'")
    c.add_argument("--degree", type=int, metavar="D", help="poly: degree (default 3)")
    c.add_argument("--coef0", type=float, metavar="C", help="poly: coef0 (default 1)")
    c.add_argument("--base-kernel", action="append", metavar="SPEC",
                   help="MKLm/EpsMKL: a base kernel (repeatable): linear, rbf:gamma=0.5, "
                        "poly:degree=2,gamma=1,coef0=1")
    c.add_argument("--test-data", metavar="FILE",
                   help="DRR/DRM: the test points (CSV with the features, optionally a label "
                        "last, which is ignored; or LIBSVM format)")
    c.add_argument("--solution", required=True, metavar="FILE",
                   help="the point to certify: .npz or .json with named arrays (see below), or "
                        "another tool's model file with --solution-format")
    c.add_argument("--solution-format", choices=_SOLUTION_FORMATS, metavar="FORMAT",
                   help=f"{' | '.join(_SOLUTION_FORMATS)} (default: from the file's extension)")
    c.add_argument("--tol", type=_tol_arg, default=1e-6,
                   help="tolerance on the scaled residuals (default 1e-6)")
    c.add_argument("--reference", action=ReferenceFlag, default=None,
                   help="compute the reference optimum for the objective gap (default: when "
                        "m <= 2000)")
    c.add_argument("--json", action="store_true", help="print the certificate as JSON")
    c.add_argument("--diagnose", action="store_true",
                   help="when the certificate fails, certify the point on the nearby problems "
                        "a solver writer plausibly solved instead (loss weights scaled by m or "
                        "2, the papers' parametrisations, intercept conventions, squared "
                        "hinge, flipped labels) and name those it is optimal for")
    c.add_argument("--verbose", "-v", action="store_true",
                   help="print every array (objectives per test point, mu, dual variables)")
    c.set_defaults(func=cmd_certify)

    from .check_solver import add_parser as _add_check_solver

    _add_check_solver(sub)
    derive = _derive_module()
    if derive is not None:
        dp = derive.add_parser(sub)
        if isinstance(dp, argparse.ArgumentParser):
            dp.set_defaults(func=derive.run)
    else:
        d = sub.add_parser("derive", add_help=False)
        d.add_argument("rest", nargs=argparse.REMAINDER)
        d.set_defaults(func=_cmd_derive_missing)
    return p


_FLAG_IN_BRACKETS = re.compile(r"^\[(--(?:json|verbose|no-fast|reference|no-reference))\]$")


def _unbracket(argv):
    """``[--json]`` copied from a usage line means ``--json``."""
    return [(_FLAG_IN_BRACKETS.match(a).group(1) if _FLAG_IN_BRACKETS.match(a) else a)
            for a in argv]


def _silence_stdout():
    """After a closed pipe: point stdout at /dev/null so that the interpreter's final flush
    does not complain (the recipe of the Python documentation, signal module)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None):
    """Run the command line; returns the exit status (0 holds / OK, 1 fails, 2 bad input)."""
    argv = _unbracket(list(sys.argv[1:] if argv is None else argv))
    debug = bool(os.environ.get("REFMODELS_DEBUG"))
    args, prog = None, PROG
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parser = build_parser()
            args = parser.parse_args(argv)
            prog = f"{PROG} {args.command}"
            func = getattr(args, "func", None)
            if func is None:                             # a subcommand that set no func
                derive = _derive_module()
                func = derive.run if (args.command == "derive" and derive) else None
            if func is None:
                raise CLIError(f"no handler for the subcommand {args.command!r}")
            rc = func(args)
            sys.stdout.flush()
        _report_warnings(caught, prog)
        return 0 if rc is None else int(rc)
    except SystemExit as exc:                            # argparse: --help (0) or usage (2)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        code = exc.code
        if isinstance(code, str):
            print(f"{prog}: error: {code}", file=sys.stderr)
        return code if isinstance(code, int) else (0 if code is None else 2)
    except BrokenPipeError:
        _silence_stdout()
        verdict = getattr(args, "_verdict", None)
        return verdict if verdict is not None else EXIT_PIPE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:                             # noqa: BLE001 - bad input: exit 2
        if debug:
            traceback.print_exc()
            _report_warnings(caught, prog)
        # bad input is one line: the warnings on the way to it (NumPy's overflow on the
        # data, say) are its symptoms, not news (REFMODELS_DEBUG=1 shows them)
        print(f"{prog}: error: {_describe(exc)}", file=sys.stderr)
        return 2


def _report_warnings(caught, prog):
    seen = set()
    for w in caught or ():
        msg = f"{w.category.__name__}: {_one_line(w.message)}"
        if msg in seen:
            continue
        seen.add(msg)
        try:
            print(f"{prog}: warning: {msg}", file=sys.stderr)
        except (BrokenPipeError, ValueError):
            break
