"""Optional dependencies (the package's extras): import one, or say which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from overlap_check.model.errors import MissingDependencyError


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module``; raise MissingDependencyError naming ``extra`` when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{what} needs {module}, which is not installed",
            hint=f"pip install 'overlap-check[{extra}]'",
        ) from None
