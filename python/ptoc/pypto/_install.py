"""Making ``import pypto`` give ptoc's compatibility package, without ever shadowing
a real PyPTO unless asked."""

import importlib.machinery
import importlib.util
import sys
import warnings

_OUR_NAME = __name__.rsplit(".", 1)[0]  # "ptoc.pypto"


def real_pypto_spec():
    """The import spec of a real PyPTO on ``sys.path`` (or already imported), else
    None."""
    loaded = sys.modules.get("pypto")
    if loaded is not None:
        if getattr(loaded, "__name__", None) == _OUR_NAME:
            return None
        return getattr(loaded, "__spec__", None) or importlib.machinery.ModuleSpec(
            "pypto", None)
    try:
        return importlib.util.find_spec("pypto")
    except (ImportError, ValueError):
        return None


def _where(spec):
    return getattr(spec, "origin", None) or "an imported module"


def install(force=False):
    """Make ``import pypto`` (and ``import pypto.frontend``) give ptoc's
    compatibility package. Returns True when it does. If a real PyPTO is importable it
    is left in place (a warning says where it is, and False is returned) unless
    ``force=True``."""
    spec = real_pypto_spec()
    if spec is not None and not force:
        warnings.warn(f"ptoc.pypto.install(): a real PyPTO is importable ({_where(spec)}); "
                      "leaving it in place. Pass force=True to run PyPTO programs on ptoc "
                      "anyway.", UserWarning, stacklevel=2)
        return False
    package = sys.modules[_OUR_NAME]
    sys.modules["pypto"] = package
    sys.modules["pypto.frontend"] = package.frontend
    return True


def uninstall():
    """Undo ``install()`` (only ptoc's entries are removed)."""
    package = sys.modules.get(_OUR_NAME)
    if package is not None and sys.modules.get("pypto") is package:
        del sys.modules["pypto"]
        if sys.modules.get("pypto.frontend") is package.frontend:
            del sys.modules["pypto.frontend"]
