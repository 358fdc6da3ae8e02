"""
Follow a derivation
===================

:func:`refmodels.derive.derive` (on the console: ``refmodels derive ODM``) walks a family
from its primal to its dual and to the solver's step, with a numerical check at every step
and the papers' errata shown failing.
"""
import matplotlib.pyplot as plt

from refmodels.derive import derive

wt = derive("ODM", seed=0)
print(wt.summary())
print([s.title for s in wt.steps])

# %%
# Every step is an object: its formula (Unicode and LaTeX), its source, its checks, and
# the algebra SymPy did (here: the Lagrangian with the stationarity conditions substituted).
step = wt.steps[3]
print(step.title, "|", step.source)
print(step.unicode)
for label, unicode, latex in step.algebra:
    print("SymPy:", label, "=", unicode)
for c in step.checks:
    print(c.line())

# %%
# A check compares two independently computed quantities, so it can fail: move one side
# by 0.1 % and the residual jumps above the tolerance.
c = step.checks[1]
print(f"residual {c.residual:.1e}; with one side off by 0.1 %: {c.perturbed(1e-3):.1e} "
      f"(tol {c.tol:.0e})")

# %%
# The erratum of this step: the printed formula fails, the corrected one holds.
e = step.errata[0]
print(e.source, "-", e.text)
print("printed:  ", e.printed.line())
print("corrected:", e.corrected.line())

# %%
# The picture of the instance: ODM's band and its support vectors (the points outside the
# band), drawn by the walk-through itself.
fig = plt.figure(figsize=(6.4, 4.0))
wt.figures[0].draw(fig)
plt.show()

# %%
# A complete LaTeX document for slides or notes (``refmodels derive ODM --latex
# --standalone``), ready for pdflatex or xelatex:
tex = wt.to_latex(standalone=True)
print(tex[:400])
