"""Evaluation: the paper's tables, convergence, reports with plots, LangSmith experiments.

- `grid`: every Judge x Planner pair over an annotated set (`plan_runs`, `run_cells`,
  `arun_grid`), each run scored with `planverify.metrics`.
- `convergence`: the share of plans final after k revision rounds (Figure 3), stop reasons,
  plan-length cut, and how many final plans the simulator can carry out.
- `report`, `plots`: report.md, results.json and PNG figures (matplotlib, the `eval` extra).
- `cache`: `SQLiteCache`, a LangChain model cache in SQLite, so reruns cost nothing.
- `smith`: the annotated set as a LangSmith dataset, each run as an experiment.

The command is `planverify.cli.eval`. May import `api` and the layers below.
"""

from planverify.eval.cache import DEFAULT_CACHE, SQLiteCache
from planverify.eval.convergence import Convergence, convergence
from planverify.eval.grid import Cell, Run, arun_grid, plan_runs, run_cells
from planverify.eval.report import EvalSettings, write_report

__all__ = [
    "DEFAULT_CACHE",
    "Cell",
    "Convergence",
    "EvalSettings",
    "Run",
    "SQLiteCache",
    "arun_grid",
    "convergence",
    "plan_runs",
    "run_cells",
    "write_report",
]
