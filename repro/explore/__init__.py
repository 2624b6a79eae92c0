"""The differential explorer (``python -m repro --explore``): generated models, each a ScriptModule
twin and an eager twin written from one text, put through drawn steps and compared on every
observable; each departure explained by the catalogue's recognisers (handed in: nothing here imports
the catalogue), TorchScript's design, an undocumented refusal, or left unexplained and shrunk by
Hypothesis to a standalone script.

    generate.py   the model specs (Hypothesis strategies) and the twins' source text
    loading.py    that text written to a file and imported (TorchScript reads source with inspect)
    steps.py      the steps drawn after it (hooks, calls under a mode, copies, assignments) and doing them
    case.py       one case run on one twin, step by step; process-wide state restored
    classify.py   the twins compared: the first departure, loud or silent, and what explains it
    script.py     a departure as a standalone script that exits 1 while it departs
    run.py        the search and the shrinking (Hypothesis), cases in forked workers
"""
