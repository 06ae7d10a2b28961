"""The bundled catalog's version, on its own so that `costsched --version` need not load
the catalog."""

CATALOG_VERSION = "2026.11"
