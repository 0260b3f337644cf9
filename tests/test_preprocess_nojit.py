"""The discretisation kernels also run as plain Python (``NUMBA_DISABLE_JIT=1``).

Numba compiles the kernels; this runs ``test_preprocess_kernels.py`` once more in a subprocess
with the JIT disabled, so the kernels' Python semantics (what the twins are compared with, and
what coverage tools see) are tested too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_kernel_tests_pass_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "test_preprocess_kernels.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
