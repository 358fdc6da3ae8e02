"""Pictures of the walk-throughs' instances. Each function returns a ``draw(fig)``
callable for :class:`~refmodels.derive.core.Figure`; matplotlib is imported only when a
figure is drawn (``Walkthrough.save_figures``), never when a walk-through runs.

Markers are chosen so that the pictures read in grey scale: class +1 as filled circles,
class −1 as crosses.
"""
from __future__ import annotations

import numpy as np

_POS = dict(marker="o", color="#1f77b4", edgecolors="k", linewidths=0.5, s=36, zorder=3)
_NEG = dict(marker="x", color="#d62728", s=40, linewidths=1.6, zorder=3)


def _scatter(ax, X, y, labels=("y = +1", "y = −1")):
    ax.scatter(X[y > 0, 0], X[y > 0, 1], label=labels[0], **_POS)
    ax.scatter(X[y < 0, 0], X[y < 0, 1], label=labels[1], **_NEG)


def _grid(X, n=160, pad=0.6):
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    return gx, gy, np.c_[gx.ravel(), gy.ravel()]


def decision_2d(X, y, f, levels=(-1, 0, 1), sv=None, bound=None, title=None,
                shade=None):
    """The 2-D instance with contours of the decision function ``f`` (a callable on an
    (n, 2) array) at ``levels`` (0 solid, others dashed); ``sv`` marks support vectors
    (circled), ``bound`` those at a bound (bold circle). ``shade=(lo, hi)`` fills the band
    ``lo ≤ y·f ≤ hi`` of each class's side lightly (ODM's band)."""
    X, y = np.asarray(X, float), np.asarray(y)

    def draw(fig):
        ax = fig.add_subplot(111)
        gx, gy, Z = _grid(X)
        fz = np.asarray(f(Z), float).reshape(gx.shape)
        if shade is not None:
            lo, hi = shade
            ax.contourf(gx, gy, fz, levels=[lo, hi], colors=["#1f77b4"], alpha=0.12)
            ax.contourf(gx, gy, fz, levels=[-hi, -lo], colors=["#d62728"], alpha=0.12)
        styles = ["solid" if abs(v) < 1e-12 else "dashed" for v in levels]
        cs = ax.contour(gx, gy, fz, levels=sorted(levels), colors="k",
                        linestyles=[s for _, s in sorted(zip(levels, styles))],
                        linewidths=[1.6 if abs(v) < 1e-12 else 0.9 for v in sorted(levels)])
        ax.clabel(cs, fmt=lambda v: f"f = {v:g}", fontsize=7)
        _scatter(ax, X, y)
        if sv is not None:
            s = np.asarray(sv, bool)
            ax.scatter(X[s, 0], X[s, 1], s=170, facecolors="none", edgecolors="k",
                       linewidths=0.8, label="support vector", zorder=2)
            if bound is not None:
                bd = np.asarray(bound, bool) & s
                ax.scatter(X[bd, 0], X[bd, 1], s=170, facecolors="none", edgecolors="k",
                           linewidths=2.2, zorder=2, label="at the bound")
        ax.set_xlabel("x₁")
        ax.set_ylabel("x₂")
        ax.set_aspect("equal", adjustable="box")
        ax.legend(fontsize=7, loc="best", framealpha=0.85)
        if title:
            ax.set_title(title, fontsize=9)
    return draw


def margin_histograms(margins, names, band=None, bins=30, title=None):
    """Histograms of the margins ``y_i f(x_i)`` of several models (one panel each, shared
    axis), the line γ = 1 and, if given, the band ``[1 − θ, 1 + θ]`` shaded."""
    def draw(fig):
        k = len(margins)
        axes = fig.subplots(k, 1, sharex=True)
        axes = np.atleast_1d(axes)
        lo = min(float(np.min(g)) for g in margins)
        hi = max(float(np.max(g)) for g in margins)
        edges = np.linspace(lo, hi, bins + 1)
        for ax, g, name in zip(axes, margins, names):
            g = np.asarray(g, float)
            ax.hist(g, bins=edges, color="#7f7f7f", edgecolor="k", linewidth=0.4)
            ax.axvline(1.0, color="k", lw=1.0)
            if band is not None:
                ax.axvspan(1 - band, 1 + band, color="#1f77b4", alpha=0.15)
            ax.set_ylabel("points", fontsize=8)
            ax.set_title(f"{name}: margin mean {g.mean():.2f}, std {g.std():.2f}",
                         fontsize=8)
        axes[-1].set_xlabel("margin γ_i = y_i f(x_i)")
        if title:
            fig.suptitle(title, fontsize=9)
        fig.tight_layout()
    return draw


def path_plot(params, coefs, xlabel, ylabel="coefficient", logx=True, title=None,
              labels=None):
    """A regularization path: one line per coefficient against the parameter."""
    def draw(fig):
        ax = fig.add_subplot(111)
        P = np.asarray(params, float)
        Cf = np.asarray(coefs, float)
        for j in range(Cf.shape[1]):
            ax.plot(P, Cf[:, j], lw=1.0, label=None if labels is None else labels[j])
        if logx:
            ax.set_xscale("log")
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if labels is not None and len(labels) <= 12:
            ax.legend(fontsize=7, ncol=2)
        if title:
            ax.set_title(title, fontsize=9)
    return draw


def bars(values, groups, xlabel="training point i", ylabel="w_i", title=None,
         group_names=None):
    """Coefficients as bars coloured by group (DRR's w over the training points)."""
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
    hatches = ["", "//", "..", "xx", "\\\\", "oo"]

    def draw(fig):
        ax = fig.add_subplot(111)
        v = np.asarray(values, float)
        for c, idx in enumerate(groups):
            idx = np.asarray(idx)
            name = group_names[c] if group_names else f"class {c}"
            ax.bar(idx, v[idx], color=colors[c % len(colors)], hatch=hatches[c % len(hatches)],
                   edgecolor="k", linewidth=0.4, label=name)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        if title:
            ax.set_title(title, fontsize=9)
    return draw


def curve(x, ys, names, xlabel, ylabel, logy=False, title=None, styles=None, ylim=None):
    """Several curves on one axis (rates of convergence, J along a direction)."""
    per_curve = isinstance(x, (list, tuple)) and len(x) == len(ys) and \
        all(np.ndim(xj) == 1 for xj in x)

    def draw(fig):
        ax = fig.add_subplot(111)
        for j, (yv, n) in enumerate(zip(ys, names)):
            st = (styles or ["-", "--", ":", "-."])[j % len(styles or "1234")]
            ax.plot(x[j] if per_curve else x, yv, st, color="k" if j == 0 else None,
                    lw=1.2, label=n)
        if logy:
            ax.set_yscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        if title:
            ax.set_title(title, fontsize=9)
    return draw


def regions_2d(X, y, scores, sv=None, title=None):
    """Multi-class picture: the regions ``argmax_l s_l(x)`` (``scores`` maps an (n, 2) array
    to (n, k) scores), the points of each class, ``sv`` circled."""
    markers = ["o", "x", "s", "^", "D", "v"]
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]

    def draw(fig):
        from matplotlib.colors import ListedColormap

        ax = fig.add_subplot(111)
        X_, y_ = np.asarray(X, float), np.asarray(y)
        k = int(y_.max()) + 1
        gx, gy, Z = _grid(X_)
        lab = np.argmax(np.asarray(scores(Z), float), axis=1).reshape(gx.shape)
        ax.contourf(gx, gy, lab, levels=np.arange(k + 1) - 0.5,
                    cmap=ListedColormap(colors[:k]), alpha=0.15)
        ax.contour(gx, gy, lab, levels=np.arange(k) + 0.5, colors="k", linewidths=0.8)
        for c in range(k):
            pts = X_[y_ == c]
            kw = dict(marker=markers[c % 6], s=40, zorder=3, label=f"class {c}")
            if markers[c % 6] == "x":
                ax.scatter(pts[:, 0], pts[:, 1], color=colors[c % 6], linewidths=1.6, **kw)
            else:
                ax.scatter(pts[:, 0], pts[:, 1], color=colors[c % 6], edgecolors="k",
                           linewidths=0.5, **kw)
        if sv is not None:
            s = np.asarray(sv, bool)
            ax.scatter(X_[s, 0], X_[s, 1], s=170, facecolors="none", edgecolors="k",
                       linewidths=0.8, label="support vector", zorder=2)
        ax.set_xlabel("x₁")
        ax.set_ylabel("x₂")
        ax.set_aspect("equal", adjustable="box")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        if title:
            ax.set_title(title, fontsize=9)
    return draw
