"""``python -m refmodels.cli``: the same as the ``refmodels`` console script."""
import sys

from refmodels.cli import main

sys.exit(main())
