"""The oracle engine: the modules under test, the scenario table, what a run records, and the judging."""
