"""`python -m bench`: the whole benchmark suite (bench/run.py)."""

from __future__ import annotations

import sys

from bench.run import main

sys.exit(main())
