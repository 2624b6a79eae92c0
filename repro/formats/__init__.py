"""One module per output format; each exposes ``render(report) -> str``."""
