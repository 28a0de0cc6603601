"""`python -m kbase_ci`: the `kbase` command."""

import sys

from kbase_ci.cli.main import main

sys.exit(main())
