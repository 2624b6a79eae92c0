"""One module per output format, each a set of pure ``render*`` functions returning text; the CLI picks one.

What each ``render`` takes differs because each format shows more than the report:

- ``text.render(report)``: the terminal report; ``text`` also renders the bug list, root causes,
  proofs and candidate verdicts (``render_bugs``, ``render_explanations``, ``render_proofs``,
  ``render_candidates``).
- ``json.render(report, causes)``: the report, with the measured root cause of each bug named, for machines;
  ``json.render_proofs(environment, proofs)`` for ``--workarounds --json``.
- ``markdown.render(report, filing, cause)``: an upstream issue body, with the filing kit's material
  (script output, versions, candidates) and the bug's cause as steps.
- ``support_table.render(environment, rows, proofs)``: the per-API support table, from the rows
  ``support_rows`` makes of every scenario run and the ledger's proofs.
"""
