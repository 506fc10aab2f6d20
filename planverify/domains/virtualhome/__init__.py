"""VirtualHome through the `eai-eval` package (import name `virtualhome_eval`).

- `data`: the installed package's human programs, their scene graphs and `vh_goal` goals;
- `notation`: script lines such as `[WALK] <kitchen> (1.11)`, parsed and written back;
- `simulate`: a program run step by step on its initial graph by the package's own simulator;
- `goals`: whether a run meets a `vh_goal` (node and edge states, ordered action goals);
- `records`: programs as episode records (`planverify convert --from virtualhome`).

Only `data`, `notation` and `records` load without the package; `simulate` and `goals` need it
(`pip install 'planverify[virtualhome]'`).
"""
