"""The tree-sitter Markdown grammar (block and inline), loaded once.

`import tree_sitter_markdown` runs its package `__init__`, which imports
`importlib.resources` (and with it `tempfile`, `shutil`, `zipfile` machinery) to offer
query files kbase never reads: 5-10 ms of every hook run that parses a note, measured
on the 2-core benchmark machine, against 0.3 ms for the compiled module alone. So the
compiled `_binding` module is loaded from the package's folder without running the
package; anything unexpected there (another layout, a frozen install) falls back to the
plain import.
"""

from __future__ import annotations

import sys
from types import ModuleType

from tree_sitter import Language

_NAME = "tree_sitter_markdown._binding"


def _binding() -> ModuleType:
    loaded = sys.modules.get(_NAME)
    if loaded is not None:
        return loaded
    try:
        import importlib.machinery
        import importlib.util
        import os

        spec = importlib.util.find_spec("tree_sitter_markdown")  # finds, does not run
        folders = list(spec.submodule_search_locations or []) if spec else []
        for folder in folders:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, "_binding" + suffix)
                if os.path.isfile(path):
                    found = importlib.util.spec_from_file_location(_NAME, path)
                    if found is None or found.loader is None:
                        continue
                    module = importlib.util.module_from_spec(found)
                    found.loader.exec_module(module)
                    sys.modules[_NAME] = module
                    return module
    except (ImportError, OSError):
        pass
    import importlib

    return importlib.import_module(_NAME)


_MODULE = _binding()
BLOCK = Language(_MODULE.language())
INLINE = Language(_MODULE.inline_language())
