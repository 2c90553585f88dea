"""The package's build step that pyproject.toml cannot say: the Dream skill, the foreground agent's
skill and the demo's sessions live at the top of the checkout (skills/, fixtures/nadia/), and are
copied into the built package as dream/bundled/ so `pip install .` works like a checkout."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLED = {"skills": "skills", "fixtures/nadia": "nadia"}


class BuildWithBundle(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "dream" / "bundled"
        for source, name in BUNDLED.items():
            shutil.copytree(source, target / name, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithBundle})
