"""gpu_engine test setup.

pyproject's ``filterwarnings`` names a numba warning class, so pytest imports numba while it
parses its configuration, before ``tests/conftest.py`` sets ``NUMBA_ENABLE_CUDASIM``; numba has
then read its config without the simulator. Re-reading the config here, before anything
imports ``numba.cuda`` (which picks simulator or driver at import), puts the simulator back.
"""

import os
import sys

import numba.core.config

if (
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    and not numba.core.config.ENABLE_CUDASIM
    and "numba.cuda" not in sys.modules
):
    numba.core.config.reload_config()
