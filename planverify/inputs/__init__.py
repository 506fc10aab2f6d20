"""Where episodes come from: TEACh game files, JSONL files of records, directories and globs.

May import `records` only.
"""
