"""Entry point for ``python -m repro``."""

from repro.cli import leave, main

leave(main())
