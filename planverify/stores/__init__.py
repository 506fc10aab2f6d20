"""Where runs are kept: the batched SQLite and PostgreSQL checkpointers, their serializer, reading
runs back, and output files written whole or not at all.

May import `graphs` and the layers below it.
"""

from planverify.stores.serde import state_serializer
from planverify.stores.sqlite import BatchedSqliteSaver

__all__ = ["BatchedSqliteSaver", "state_serializer"]
