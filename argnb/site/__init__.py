"""The course as a static website, built by Sphinx + MyST-NB from the notebooks (``argnb course
site``, ``make site``): lessons executed once on the embedded model (cached), student exercises,
the docs, an instructors' page. Nothing on a page is fetched from the network when it is read.

See ``docs/site.md`` for why Sphinx and not Jupyter Book 2 (it builds offline from PyPI alone).
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr

__all__ = ["SiteBuild", "build_site", "stage"]

__getattr__ = lazy_getattr(
    __name__,
    {
        "SiteBuild": "argnb.site.build",
        "build_site": "argnb.site.build",
        "stage": "argnb.site.stage",
    },
)
