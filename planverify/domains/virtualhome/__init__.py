"""VirtualHome through the `eai-eval` package (import name `virtualhome_eval`).

- `data`: the installed package's human programs, their scene graphs and `vh_goal` goals;
- `notation`: script lines such as `[WALK] <kitchen> (1.11)`, parsed and written back;
- `simulate`: a program run step by step on its initial graph by the package's own simulator;
- `goals`: whether a run meets a `vh_goal` (node and edge states, ordered action goals);
- `records`: programs as episode records (`planverify convert --from virtualhome`);
- `replay`: a program's scene and goal, and fast re-runs of edited versions of it;
- `kinds`: the trim policies' kinds on VirtualHome, in one table;
- `repair`: steps to put in, found by trying them in the simulator;
- `edit`: the program as the offline Judge edits it, and reading it;
- `keeps`: what `natural` keeps of the steps the Judge's search removed, and why;
- `judge`: the offline Judge, by simulation against `vh_goal`;
- `corrupt`: labelled errors put into human programs;
- `domain`: what the core needs (judge, certify a flag, prompt facts, object names, goal check);
- `adapter`: the domain as the registry gives it to the core (`planverify.domains.domain_of`).

Only `data`, `notation`, `records` and `goals` load without the package; the others need it
(`pip install 'planverify[virtualhome]'`).
"""
