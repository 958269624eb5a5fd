"""The Sphinx configuration of the course site (the staged ``conf.py`` imports it).

Everything a page needs is served with it: myst-nb's CDN scripts for ipywidgets (require.js and
the HTML widget manager) are turned off, because widgets cannot run on a static page and argnb's
widgets leave their last result as plain HTML under themselves (:mod:`argnb.widgets.static`);
the widget-view output is dropped so the widget's text form ("… a live widget: run this cell to
use it") shows instead. Maps are their own iframe (``srcdoc``, vis-network inlined) with the
static picture over it (:mod:`argnb.maps.display`), so they need nothing either. Sphinx adds
MathJax (from a CDN) only to a page with math; the course writes none, and the site's tests fail
on any request a page makes outside the site, so a lesson that gains math is noticed.
"""

from __future__ import annotations

import os
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def settings(*, cache: str, timeout: int = 1800) -> dict[str, Any]:
    """The ``conf.py`` values; ``cache`` is jupyter-cache's folder (outside the source tree)."""
    return {
        "project": "Argumentation with language models",
        "author": "the argnb course authors",
        "copyright": "the argnb course authors",
        "extensions": ["myst_nb", "argnb.site.redact"],
        "root_doc": "index",
        "exclude_patterns": ["_build", "_notebooks/**", "assets/**", "**/.ipynb_checkpoints"],
        "html_theme": "sphinx_book_theme",
        "html_title": "Argumentation with LLMs",
        "html_theme_options": {
            "home_page_in_toc": True,
            "show_navbar_depth": 1,
            "use_download_button": False,
            "use_fullscreen_button": False,
            "use_repository_button": False,
            "navigation_with_keys": False,
        },
        "html_context": {"default_mode": "light"},  # else the theme logs an error per page
        "html_static_path": ["_static"],
        "html_css_files": ["argnb-site.css"],
        "html_copy_source": False,
        "html_show_sourcelink": False,
        "html_last_updated_fmt": None,
        "myst_heading_anchors": 3,
        "myst_enable_extensions": ["deflist"],
        "suppress_warnings": ["myst.header", "mystnb.unknown_mime_type"],
        # execution: once, on the embedded model, cached per notebook by jupyter-cache
        "nb_execution_mode": "cache",
        "nb_execution_cache_path": cache,
        "nb_execution_timeout": timeout,
        "nb_execution_excludepatterns": [
            "exercises/*/student/*.ipynb"
        ],  # student versions: stubs, not run
        "nb_execution_raise_on_error": True,
        "nb_execution_show_tb": True,
        "nb_ipywidgets_js": {},  # no require.js / widget manager from a CDN
        "nb_mime_priority_overrides": [("html", WIDGET_VIEW, None)],
        "nb_merge_streams": True,
        "nb_output_stderr": "remove",  # warnings name files of the build machine
    }


def apply(namespace: dict[str, Any]) -> None:
    """Fill a ``conf.py``'s namespace (the cache folder comes from ``ARGNB_SITE_CACHE``)."""
    namespace.update(settings(cache=os.environ["ARGNB_SITE_CACHE"]))
