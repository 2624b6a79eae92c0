"""a script_method forward under torch.autocast (JIT autocast on).

`git bisect run python repro/autocast_bug.py`: exit 1 bug, 0 fixed, 125 cannot test (``repro.bisect``).
"""

import os
import sys

# This folder holds repro/bisect.py, which must not shadow the standard library's bisect: the checkout replaces it.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
from repro.bisect import main  # noqa: E402  (after the path is set)

sys.exit(main(["autocast-compiled-float32"]))
