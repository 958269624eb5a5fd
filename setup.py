"""Build step that puts the course into the wheel (all other metadata is in pyproject.toml).

The notebooks, the assets and the *student* versions of the exercises are copied into
``argnb/_course`` of the build, so ``pip install argnb`` gives ``argnb course open`` everything it
copies for a learner, with no second copy of those files in git. Solutions are never packaged.
Which files go in is decided by :func:`argnb.course.course_files` (standard library only).
"""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithCourse(build_py):
    """``build_py`` plus the course files under ``argnb/_course``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the course from the checkout
        sys.path.insert(0, str(ROOT))
        try:
            from argnb.course import course_files, doc_files
        finally:
            sys.path.pop(0)
        if not (ROOT / "notebooks").is_dir():
            raise SystemExit(
                "setup.py: no notebooks/ next to setup.py; the course cannot be packaged"
            )
        target = Path(self.build_lib) / "argnb" / "_course"
        shutil.rmtree(target, ignore_errors=True)
        files = course_files(ROOT) + doc_files(ROOT)  # docs: pages of the course site
        for rel in files:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, target / rel)
        print(f"setup.py: packaged {len(files)} course files into argnb/_course")


setup(cmdclass={"build_py": BuildWithCourse})
