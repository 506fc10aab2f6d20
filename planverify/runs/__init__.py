"""Running many episodes: batches with progress and a resumable output, the consoles, verifying on
a LangGraph server (`--server`), and serving planverify as one.

May import `stores`, `graphs` and the layers below them.
"""

from planverify.runs.batch import BatchReport, run_batch

__all__ = ["BatchReport", "run_batch"]
