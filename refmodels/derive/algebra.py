"""The symbolic steps of the walk-throughs, carried by SymPy with matrix symbols.

For each family the Lagrangian is written once with ``sympy.MatrixSymbol`` objects
(``w``, ``ξ``, the multipliers, the data ``F``, ``Y``, ``e``, ...); SymPy differentiates it
(``sympy.diff`` of a matrix expression) and substitutes the stationarity conditions into
it, and the results are printed as SymPy returns them, after three rewritings that are
facts of the notation, not algebra: transposes of symmetric matrices dropped
(``Yᵀ = Y``, ``Gᵀ = G``, …), products of consecutive factors renamed (``FFᵀ = G``,
``YGY = Q``, ``YY = I``, ``Ye = y``, ``eᵀe = m``), and a scalar ``uᵀSv`` written in one
orientation. The checks then evaluate SymPy's expressions on the walk-through's instance
(``sympy.lambdify``) against the formulas as the papers state them, so that what is printed
is what was checked.

The symbolic work is done once per family and process (:func:`derivation`, cached).
"""
from __future__ import annotations

import functools

import numpy as np

from .core import Check

_GREEK = [("alpha", "α"), ("beta", "β"), ("zeta", "ζ"), ("xi", "ξ"), ("varepsilon", "ε"),
          ("epsilon", "ε"),
          ("mu_1", "μ₁"), ("mu_2", "μ₂"), ("mu", "μ"), ("theta", "θ"), ("lambda", "λ"),
          ("eta", "η"), ("nu", "ν")]


def _unicode(expr):
    """A one-line Unicode form of a SymPy (matrix) expression."""
    import re

    import sympy as sp

    s = sp.sstr(expr)
    for name, g in _GREEK:
        s = re.sub(rf"\b{name}\b", g, s)
    s = re.sub(r"(?<![\w)])(\d+/[^*\s()]+)\*", r"(\1)*", s)   # 1/μ*w -> (1/μ)*w
    s = s.replace("**", "^").replace(".T", "ᵀ")
    s = s.replace("(1/2)*", "½").replace("1/2*", "½")
    s = s.replace("*", "")
    s = s.replace("-", "−")
    return s


def _latex(expr):
    import sympy as sp

    t = sp.latex(expr)
    return t.replace(r"\left(\frac{1}{2}\right)", r"\tfrac12").replace("+ -", "-")


def _canon_scalar(e, sym):
    """A 1×1 product uᵀSv and its transpose are the same number: keep one orientation."""
    import sympy as sp

    if isinstance(e, sp.MatMul) and e.shape == (1, 1):
        t = sp.Transpose(e).doit().xreplace(sym)
        if sp.srepr(t) < sp.srepr(e):
            return t
    return e


def _contract(expr, rules, sym):
    """Rewrite consecutive factors of every matrix product by ``rules``:
    ``[(tuple of factors, replacement)]``; a replacement is a matrix, ``None`` (an identity
    to drop) or a scalar."""
    import sympy as sp

    def visit(e):
        if isinstance(e, sp.MatMul):
            coeff, mats = e.as_coeff_matrices()
            mats = [visit(a) for a in mats]
            changed = True
            while changed:
                changed = False
                for pat, rep in rules:
                    k = len(pat)
                    for i in range(len(mats) - k + 1):
                        if tuple(mats[i:i + k]) == pat:
                            if rep is None:
                                mats = mats[:i] + mats[i + k:]
                            elif getattr(rep, "is_Matrix", False):
                                mats = mats[:i] + [rep] + mats[i + k:]
                            else:
                                coeff = coeff * rep
                                mats = mats[:i] + mats[i + k:]
                            changed = True
                            break
                    if changed:
                        break
            if not mats:
                return coeff
            out = coeff * (sp.MatMul(*mats).doit() if len(mats) > 1 else mats[0])
            return _canon_scalar(out, sym) if coeff == 1 else \
                coeff * _canon_scalar(sp.MatMul(*mats).doit() if len(mats) > 1 else mats[0], sym)
        if isinstance(e, sp.MatAdd):
            return sp.MatAdd(*[visit(a) for a in e.args]).doit()
        if getattr(e, "args", None) and isinstance(e, sp.Basic) and e.is_Matrix:
            return e.func(*[visit(a) for a in e.args])
        return e
    out = visit(expr)
    return visit(out)


def _tidy(expr, sym, rules):
    import sympy as sp

    e = sp.expand(expr).xreplace(sym)
    return _contract(e, rules, sym)


@functools.lru_cache(maxsize=None)
def derivation(family):
    """The symbolic derivation of ``family``: a dict with ``"gradients"`` and ``"dual"``,
    each a list of ``(label, sympy expression)`` (tidied), and ``"symbols"`` (the names
    used by :func:`evaluate`)."""
    import sympy as sp

    MS = sp.MatrixSymbol
    m, r = sp.symbols("m n_F", integer=True, positive=True)
    e, Y = MS("e", m, 1), MS("Y", m, m)
    y = MS("y", m, 1)
    G, Q = MS("G", m, m), MS("Q", m, m)
    out = {"m": m, "r": r}
    if family in ("SVM", "SVMb"):
        F = MS("X" if family == "SVMb" else "F", m, r)
        w, xi, a, rr = MS("w", r, 1), MS("xi", m, 1), MS("alpha", m, 1), MS("r", m, 1)
        C = sp.Symbol("C", positive=True)
        b = sp.Symbol("b")
        margin = Y * (F * w + e * b) if family == "SVMb" else Y * F * w
        L = (w.T * w) / 2 + C * e.T * xi - a.T * (margin - e + xi) - rr.T * xi
        sym = {Y.T: Y, G.T: G, Q.T: Q}
        rules = [((F, F.T), G), ((Y, G, Y), Q), ((Y, e), y), ((e.T, Y), y.T), ((Y, Y), None)]
        grads = [("∇_w L", sp.diff(L, w)), ("∇_ξ L", sp.diff(L, xi))]
        if family == "SVMb":
            grads.append(("∂L/∂b", sp.diff(L, b)))
        subs = {w: F.T * Y * a, rr: C * e - a}
        out.update(symbols=dict(F=F, Y=Y, e=e, w=w, xi=xi, alpha=a, r=rr, C=C, b=b, y=y,
                                G=G, Q=Q),
                   gradients=[(lbl, _tidy(g, sym, rules)) for lbl, g in grads],
                   dual=[("L at w = " + ("XᵀYα" if family == "SVMb" else "FᵀYα")
                          + ", r = Ce − α", _tidy(L.subs(subs), sym, rules))])
        return out
    if family in ("ODML", "LDM"):
        F = MS("F", m, r)
        w, xi, a, rr = MS("w", r, 1), MS("xi", m, 1), MS("alpha", m, 1), MS("r", m, 1)
        mu1, mu2, c = sp.symbols("mu_1 mu_2 c", positive=True)
        Minv_name = MS("M", r, r)
        H, A = MS("H", m, m), MS("A", m, m)
        gam = Y * F * w
        dev = gam - e * e.T * gam / m
        L_def = ((w.T * w) / 2 + mu1 * (dev.T * dev) / m - mu2 * (e.T * gam) / m
                 + c * e.T * xi - a.T * (gam - e + xi) - rr.T * xi)
        M = Minv_name           # M = I + FᵀAF (symmetric, positive definite)
        L_A = ((w.T * M * w) / 2 - mu2 * (e.T * Y * F * w) / m + c * e.T * xi
               - a.T * (Y * F * w - e + xi) - rr.T * xi)
        sym = {Y.T: Y, G.T: G, Q.T: Q, M.T: M, H.T: H, A.T: A, sp.Inverse(M).T: sp.Inverse(M)}
        rules = [((Y, Y), None), ((e.T, e), m), ((Y, e), y), ((e.T, Y), y.T), ((F, F.T), G)]
        rules_dual = [((Y, Y), None), ((sp.Inverse(M), M), None), ((M, sp.Inverse(M)), None),
                      ((Y, F, sp.Inverse(M), F.T, Y), H)]
        v = a + mu2 / m * e
        subs = {w: sp.Inverse(M) * F.T * Y * v, rr: c * e - a}
        out.update(symbols=dict(F=F, Y=Y, e=e, w=w, xi=xi, alpha=a, r=rr, mu_1=mu1, mu_2=mu2,
                                c=c, M=M, H=H, y=y),
                   gradients=[("∇_w L (variance from its definition)",
                               _tidy(sp.diff(L_def, w), sym, rules)),
                              ("∇_ξ L", _tidy(sp.diff(L_def, xi), sym, rules))],
                   dual=[("L written with M = I + FᵀAF, at w = M⁻¹FᵀYv, v = α + (μ₂/m)e, "
                          "r = ce − α", _tidy(L_A.subs(subs), sym, rules_dual))])
        return out
    if family == "ODM":
        F = MS("F", m, r)
        w, xi, ep = MS("w", r, 1), MS("xi", m, 1), MS("epsilon", m, 1)
        z, b = MS("zeta", m, 1), MS("beta", m, 1)
        c, mu, th = sp.symbols("c mu theta", positive=True)
        L = ((w.T * w) / 2 + c * (xi.T * xi + mu * ep.T * ep)
             - z.T * (Y * F * w - (1 - th) * e + xi) - b.T * ((1 + th) * e + ep - Y * F * w))
        sym = {Y.T: Y, G.T: G, Q.T: Q}
        rules = [((F, F.T), G), ((Y, G, Y), Q), ((Y, Y), None)]
        subs = {w: F.T * Y * (z - b), xi: z / (2 * c), ep: b / (2 * c * mu)}
        # seed 000 eq. 15 as printed: −ξ in the upper-side term, where −ε belongs
        L_printed = ((w.T * w) / 2 + c * (xi.T * xi + mu * ep.T * ep)
                     - z.T * (Y * F * w - (1 - th) * e + xi)
                     + b.T * (Y * F * w - (1 + th) * e - xi))
        out.update(symbols=dict(F=F, Y=Y, e=e, w=w, xi=xi, epsilon=ep, zeta=z, beta=b, c=c,
                                mu=mu, theta=th, Q=Q),
                   gradients=[("∇_w L", _tidy(sp.diff(L, w), sym, rules)),
                              ("∇_ξ L", _tidy(sp.diff(L, xi), sym, rules)),
                              ("∇_ε L", _tidy(sp.diff(L, ep), sym, rules))],
                   printed=[("printed L: ∇_ξ L", _tidy(sp.diff(L_printed, xi), sym, rules)),
                            ("printed L: ∇_ε L", _tidy(sp.diff(L_printed, ep), sym, rules))],
                   dual=[("L at w = FᵀY(ζ − β), ξ = ζ/(2c), ε = β/(2cμ)",
                          _tidy(L.subs(subs), sym, rules))])
        return out
    if family == "SVMm":
        F = MS("X", m, r)
        w, xi, eta = MS("w", r, 1), MS("xi", m, 1), MS("eta", m, 1)
        a, be, rr, s = MS("alpha", m, 1), MS("beta", m, 1), MS("r", m, 1), MS("s", m, 1)
        bb = sp.Symbol("b")
        C1, C2, ep = sp.symbols("C_1 C_2 varepsilon", positive=True)
        gam = Y * (F * w + e * bb)
        L = ((w.T * w) / 2 + C1 * e.T * xi + C2 * e.T * eta - a.T * (gam - e + xi)
             - be.T * ((1 + ep) * e + eta - gam) - rr.T * xi - s.T * eta)
        sym = {Y.T: Y, G.T: G, Q.T: Q}
        rules = [((F, F.T), G), ((Y, G, Y), Q), ((Y, e), y), ((e.T, Y), y.T), ((Y, Y), None)]
        subs = {w: F.T * Y * (a - be), rr: C1 * e - a, s: C2 * e - be}
        out.update(symbols=dict(F=F, Y=Y, e=e, w=w, xi=xi, eta=eta, alpha=a, beta=be, r=rr,
                                s=s, b=bb, C_1=C1, C_2=C2, varepsilon=ep, y=y, Q=Q),
                   gradients=[("∇_w L", _tidy(sp.diff(L, w), sym, rules)),
                              ("∂L/∂b", _tidy(sp.diff(L, bb), sym, rules)),
                              ("∇_ξ L", _tidy(sp.diff(L, xi), sym, rules)),
                              ("∇_η L", _tidy(sp.diff(L, eta), sym, rules))],
                   dual=[("L at w = XᵀY(α − β), r = C₁e − α, s = C₂e − β",
                          _tidy(L.subs(subs), sym, rules))])
        return out
    if family == "DRR":
        Lm = MS("L", m, r)
        w, z, u, Kx = MS("w", m, 1), MS("z", r, 1), MS("u", r, 1), MS("K_x", m, 1)
        Lag = (z.T * z) / 2 - Kx.T * w + u.T * (Lm.T * w - z)
        sym = {}
        rules = []
        out.update(symbols=dict(L=Lm, w=w, z=z, u=u, K_x=Kx),
                   gradients=[("∇_z (smooth part)", _tidy(sp.diff(Lag, z), sym, rules)),
                              ("∇_w (smooth part)", _tidy(sp.diff(Lag, w), sym, rules))],
                   dual=[("smooth part at u = z", _tidy(Lag.subs({u: z}), sym, rules))])
        return out
    if family == "MKLm":
        F1, F2 = MS("F_1", m, r), MS("F_2", m, r)
        w1, w2, v = MS("w_1", r, 1), MS("w_2", r, 1), MS("v", m, 1)
        K1, K2 = MS("K_1", m, m), MS("K_2", m, m)
        mu1, mu2 = sp.symbols("mu_1 mu_2", positive=True)
        # the w-part of the inner Lagrangian (the rest is SVMm's): perspective terms minus vᵀf
        Lw = (w1.T * w1) / (2 * mu1) + (w2.T * w2) / (2 * mu2) - v.T * (F1 * w1 + F2 * w2)
        sym = {K1.T: K1, K2.T: K2}
        rules = [((F1, F1.T), K1), ((F2, F2.T), K2)]
        out.update(symbols=dict(F_1=F1, F_2=F2, w_1=w1, w_2=w2, v=v, mu_1=mu1, mu_2=mu2, K_1=K1,
                                K_2=K2),
                   gradients=[("∇_{w_1} L", _tidy(sp.diff(Lw, w1), sym, rules)),
                              ("∇_{w_2} L", _tidy(sp.diff(Lw, w2), sym, rules))],
                   dual=[("w-part at w_k = μ_kF_kᵀv",
                          _tidy(Lw.subs({w1: mu1 * F1.T * v, w2: mu2 * F2.T * v}), sym,
                                rules))])
        return out
    raise KeyError(family)


@functools.lru_cache(maxsize=None)
def algebra_lines(family):
    """``{"gradients": [(label, unicode, latex)], "dual": [...]}`` of :func:`derivation`."""
    d = derivation(family)
    return {k: [(lbl, _unicode(ex), _latex(ex)) for lbl, ex in d[k]]
            for k in ("gradients", "dual")}


def evaluate(family, which, index, values):
    """SymPy's expression ``derivation(family)[which][index]`` evaluated numerically
    (``sympy.lambdify``) with ``values`` ``{symbol name: array or number}``; ``m`` and ``r``
    are taken from the data. Returns a float array."""
    import sympy as sp

    d = derivation(family)
    expr = d[which][index][1]
    syms = d["symbols"]
    key = (family, which, index)
    if key not in _LAMBDIFIED:
        args = [syms[k] for k in sorted(syms)] + [d["m"], d["r"]]
        _LAMBDIFIED[key] = sp.lambdify(args, expr, "numpy")
    vals = []
    for k in sorted(syms):
        name = str(syms[k])
        if k in values:
            v = values[k]
        elif name in values:
            v = values[name]
        elif str(expr).find(name) < 0:
            v = 0.0                                  # not in this expression
        else:
            raise KeyError(f"no value for the symbol {name!r} of {family}'s {which}")
        if getattr(syms[k], "is_Matrix", False):
            shape = syms[k].shape
            v = np.asarray(v, float)
            if v.ndim == 1:
                v = v[:, None] if shape[1] == 1 else v[None, :]
            if v.ndim == 0:
                v = v.reshape(1, 1)
        vals.append(v)
    mm = values.get("m_value", 1)
    rr = values.get("r_value", 1)
    return np.asarray(_LAMBDIFIED[key](*vals, mm, rr), float)


_LAMBDIFIED = {}


def _points(F, y, rng, upper):
    m, r = F.shape
    return dict(w=rng.normal(size=r), xi=rng.normal(size=m), alpha=rng.uniform(0, upper, m),
                r=rng.uniform(0, 1, m))


def algebra_checks(family, which, rng=None, **data):
    """Checks of SymPy's expressions against the papers' formulas, on the instance."""
    rng = np.random.default_rng(0) if rng is None else rng
    if family in ("SVM", "SVMb"):
        F, y, C = np.asarray(data["F"], float), np.asarray(data["y"], float), data["C"]
        m, r = F.shape
        pt = _points(F, y, rng, C)
        b = float(rng.normal())
        vals = dict(F=F, X=F, Y=np.diag(y), e=np.ones(m), y=y, C=C, b=b,
                    G=F @ F.T, Q=(y[:, None] * (F @ F.T) * y[None, :]), m_value=m, r_value=r,
                    **pt)
        Fn = "X" if family == "SVMb" else "F"
        if which == "gradients":
            checks = [Check(f"SymPy's ∇_w L = w − {Fn}ᵀYα (matrix calculus, on the instance, "
                            "random point)", evaluate(family, "gradients", 0, vals).ravel(),
                            pt["w"] - F.T @ (y * pt["alpha"]), 1e-12),
                      Check("SymPy's ∇_ξ L = Ce − α − r", evaluate(family, "gradients", 1,
                                                                   vals).ravel(),
                            C - pt["alpha"] - pt["r"], 1e-12)]
            if family == "SVMb":
                checks.append(Check("SymPy's ∂L/∂b = −yᵀα",
                                    evaluate(family, "gradients", 2, vals).ravel(),
                                    -y @ pt["alpha"], 1e-12))
            return checks
        a = pt["alpha"]
        Qm = vals["Q"]
        typed = -(0.5 * a @ Qm @ a - a.sum())
        got = evaluate(family, "dual", 0, vals).ravel()
        what = "SymPy's substituted L = −(½αᵀQα − eᵀα) at a random α"
        if family == "SVMb":
            typed = typed - b * (y @ a)
            what = "SymPy's substituted L = −(½αᵀQα − eᵀα) − b·yᵀα at a random (α, b)"
        w_of = F.T @ (y * a)
        direct = (0.5 * w_of @ w_of + C * pt["xi"].sum()
                  - a @ (y * (F @ w_of + (b if family == "SVMb" else 0.0)) - 1 + pt["xi"])
                  - (C - a) @ pt["xi"])
        return [Check(what, got, typed, 1e-10),
                Check(f"… = L evaluated numerically at w = {Fn}ᵀYα, r = C − α, any ξ", got,
                      direct, 1e-10)]
    raise KeyError(family)
