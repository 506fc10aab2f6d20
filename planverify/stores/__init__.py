"""Where runs are kept: the batched SQLite and PostgreSQL checkpointers, their serializer, reading
runs back, and output files written whole or not at all.

May import `graphs` and the layers below it.
"""
