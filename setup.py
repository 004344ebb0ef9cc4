"""Where the wheel puts Ambry's packages: inside ``ambry/``, never at the top of site-packages.

The repository keeps ``core/``, ``desktop/`` and ``resources/`` at its top and the
code imports them by those names. In the wheel each becomes a package under
``ambry/_app/`` (``ambry._app.core`` is built from ``core/``, and so on down), so
``ambry`` is the only import name Ambry installs; the launcher in
``ambry/__init__.py`` puts ``ambry/_app`` first on ``sys.path`` before it imports
``core``. The reasons are under "Decisions" in docs/architecture.md.

The packages are found by discovery, never listed by hand: every folder under the
three, with or without ``__init__.py``. The data folders of ``resources/`` have
none; found as packages of their own, each declares its files below, so
setuptools never has to guess ("package would be ignored").
``packaging/install_check.py`` (part of ``make test``) fails if a module or a file
of ``resources/`` is missing from the wheel or the sdist, if a file left in
``build/lib`` by an earlier build reaches the wheel, or if anything but ``ambry``
lands at the top of site-packages. Everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

APP = "ambry._app"
SHIPPED = ("core", "desktop", "resources")
DATA = {
    "resources": ["*.json", "*.qss", "*.desktop"],
    "resources.icons": ["*.png", "*.svg"],
    "resources.icons.nav": ["*.svg"],
    "resources.skill": ["*.md"],
    "resources.models": ["*/*"],
}


class BuildPy(build_py):
    """Copies the packages to ``build/lib`` and removes what this build did not put there.

    setuptools reuses ``build/lib`` and the wheel takes all of it, so a module deleted
    or renamed since an earlier ``pip install .`` (``pipx``, ``uv tool``) of the same
    checkout would be installed again.
    """

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        built = {Path(name).resolve() for name in self.get_outputs()}
        for path in Path(self.build_lib, "ambry").rglob("*"):
            if path.is_file() and path.resolve() not in built:
                path.unlink()


found = find_namespace_packages(
    include=[name for top in SHIPPED for name in (top, f"{top}.*")],
    exclude=["*__pycache__*"],
)
setup(
    packages=["ambry", *sorted(f"{APP}.{name}" for name in found)],
    package_dir={f"{APP}.{top}": top for top in SHIPPED},
    package_data={f"{APP}.{name}": patterns for name, patterns in DATA.items()},
    cmdclass={"build_py": BuildPy},
)
