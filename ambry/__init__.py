"""Ambry's launcher: the ``ambry`` command and ``python -m ambry``.

The source tree keeps ``core``, ``desktop`` and ``resources`` as top-level
packages and imports them by those names. An installed wheel does not put them at
the top of site-packages, where another distribution's ``core`` would overwrite
them or be overwritten by them: it ships them inside this package, in
``ambry/_app/`` (see setup.py), and :func:`main` puts that folder first on
``sys.path`` before it imports ``core``. Run from a source checkout (the editable
install of the development venv, or ``python -m ambry`` in the repository) there
is no ``_app`` folder and the checkout itself holds the three packages.

Importing this package changes nothing; :func:`use_app_dir` and :func:`main` do,
and so does importing :mod:`ambry.client`, the Python client's public name.
The reasons for this layout are under "Decisions" in docs/architecture.md.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: The packages that an installed wheel keeps in ``ambry/_app/``.
APP_PACKAGES = ("core", "desktop", "resources")

_HERE = Path(__file__).resolve().parent


def app_dir() -> Path:
    """The folder holding Ambry's ``core``, ``desktop`` and ``resources``.

    ``_app`` beside this file in an installed wheel, else the source checkout
    this package sits in.
    """
    installed = _HERE / "_app"
    return installed if installed.is_dir() else _HERE.parent


def loads_from(module: ModuleType | None, folder: Path) -> bool:
    """Whether ``module`` was imported from a file or package folder under ``folder``."""
    file = getattr(module, "__file__", None)
    places = [file] if file else list(getattr(module, "__path__", None) or ())
    return bool(places) and all(Path(p).resolve().is_relative_to(folder) for p in places)


def use_app_dir() -> Path:
    """Make ``import core`` (and ``desktop``, ``resources``) load Ambry's own packages.

    Puts :func:`app_dir` first on ``sys.path`` and forgets any module of those
    names already imported from somewhere else (another distribution's ``core``
    that a ``.pth`` file imported at start-up, say), so the next import finds
    Ambry's. Returns the folder.

    Raises:
        ImportError: the folder lacks Ambry's packages, or ``core`` still loads
            from elsewhere.
    """
    folder = app_dir()
    if not (folder / "core" / "__init__.py").is_file():
        raise ImportError(f"Ambry's packages are missing from {folder}; reinstall ambry")
    entry = str(folder)
    if sys.path[:1] != [entry]:
        sys.path.insert(0, entry)
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in APP_PACKAGES and not loads_from(module, folder):
            del sys.modules[name]
    import core

    if not loads_from(core, folder):
        raise ImportError(f"'core' loads from {core.__file__}, not from Ambry's {folder}")
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    """Run the Ambry command line (the GUI without arguments); its exit status."""
    use_app_dir()
    from core.cli.main import main as cli_main

    return cli_main(argv)
