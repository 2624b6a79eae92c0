"""Tooling that releases this project (``python -m tools.release``), run from a checkout by the release
workflow: it ships in no package, and nothing under ``repro/`` or ``tracker/`` imports it."""
