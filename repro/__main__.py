"""Entry point for ``python -m repro``."""

from repro.cli import main
from repro.output import leave

leave(main())
