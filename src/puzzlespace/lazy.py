"""Names a package loads on first use, so that importing it costs only what is used."""

from __future__ import annotations


def lazy_exports(package: str, exports: dict[str, str], namespace: dict):
    """A package's ``__getattr__`` that loads each name of ``exports`` (name: the module of
    ``package`` that defines it) on first use, and keeps it in ``namespace``."""
    def __getattr__(name: str):
        if name in exports:
            from importlib import import_module

            value = getattr(import_module(f".{exports[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
