"""Where episodes come from: TEACh game files, JSONL files of records, directories and globs.

May import `records` only.
"""

from planverify.inputs.sources import InputError, LoadedEpisodes, load_episodes

__all__ = ["InputError", "LoadedEpisodes", "load_episodes"]
