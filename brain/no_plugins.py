"""The CLIs load no pydantic plugins: `skip_pydantic_plugins()`, called before the first model is built.

The first time pydantic builds a model's validator it looks for plugins (the `pydantic` entry-point
group): it imports importlib.metadata, which imports email, csv and zipfile, and reads the metadata
of every installed distribution. That is 15 ms of each `dream run`, on the core that imports the
compiler while git stats the Brain, for plugins (observability hooks) that Dream's and brain's
internal models have no use for. pydantic's own switch, PYDANTIC_DISABLE_PLUGINS, is read only after
that import. So pydantic's plugin loader is answered here, by a module that says "no plugins" and
hands anything else pydantic may ask of its loader to the real one.
"""

from __future__ import annotations

import functools
import sys
import types

#: pydantic's module that finds plugins (pydantic.plugin._schema_validator imports it when the first
#: validator is built and calls its get_plugins()).
LOADER = "pydantic.plugin._loader"


def skip_pydantic_plugins() -> None:
    """Make pydantic find no plugins, without looking for them; nothing when its loader already ran."""
    if LOADER in sys.modules:
        return
    module = types.ModuleType(LOADER, "pydantic's plugin loader, answering that there are no plugins (brain.no_plugins)")
    module.get_plugins = lambda: ()  # type: ignore[attr-defined]
    module.__getattr__ = _real_attribute  # type: ignore[attr-defined]
    sys.modules[LOADER] = module


def _real_attribute(name: str):
    """What the real loader module has under `name` (a pydantic that asks its loader for more than
    get_plugins still gets it)."""
    if name.startswith("__"):
        raise AttributeError(name)
    real = _real_loader()
    if real is None:
        raise AttributeError(name)
    return getattr(real, name)


@functools.cache
def _real_loader() -> types.ModuleType | None:
    """pydantic's own plugin loader module, loaded (once) beside the stand-in in sys.modules."""
    import importlib.machinery
    import importlib.util

    import pydantic.plugin

    spec = importlib.machinery.PathFinder.find_spec(LOADER, list(pydantic.plugin.__path__))
    if spec is None or spec.loader is None:
        return None
    real = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(real)
    return real
