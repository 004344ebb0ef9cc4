"""Sentence vectors for semantic search, exchange speaker names and times: step
6 -> 7 of the ladder.

Released steps are never edited: they are moved here as they shipped.
"""

#: 6 -> 7: sentence vectors for semantic search (derived data, filled in the
# background), exchange speaker names and original times, and an index for the
# purge of superseded entries.
VECTORS = """
    -- id only grows, so a reader's cache can load what was added since it last looked
    CREATE TABLE memory_vectors (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_seq INTEGER NOT NULL UNIQUE,
        model     TEXT NOT NULL,
        vector    BLOB NOT NULL
    );
    CREATE TRIGGER memory_vectors_ad AFTER DELETE ON memory_entries BEGIN
        DELETE FROM memory_vectors WHERE entry_seq = old.seq;
    END;
    CREATE TRIGGER memory_vectors_au AFTER UPDATE OF search_text ON memory_entries BEGIN
        DELETE FROM memory_vectors WHERE entry_seq = old.seq;
    END;

    CREATE TABLE exchange_vectors (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        exchange_seq INTEGER NOT NULL UNIQUE,
        model        TEXT NOT NULL,
        vector       BLOB NOT NULL
    );
    CREATE TRIGGER exchange_vectors_ad AFTER DELETE ON exchanges BEGIN
        DELETE FROM exchange_vectors WHERE exchange_seq = old.seq;
    END;

    -- the speaker's display name, and when the turn was said (imports keep real dates)
    ALTER TABLE exchanges ADD COLUMN name TEXT;
    ALTER TABLE exchanges ADD COLUMN said_at TEXT;
    UPDATE exchanges SET said_at = created_at;
    CREATE INDEX idx_exchanges_said ON exchanges(said_at);
    CREATE INDEX idx_exchanges_name ON exchanges(name COLLATE NOCASE) WHERE name IS NOT NULL;

    CREATE INDEX idx_entries_superseded_at ON memory_entries(superseded_at)
        WHERE superseded_at IS NOT NULL;

    -- each indexed term's document count, read by the search planner in one seek
    CREATE VIRTUAL TABLE memory_vocab USING fts5vocab(memory_fts, 'row');
    """

#: 9 -> 10: a named speaker's latest turns read in order from one index, without
# sorting every turn they said (11-57 ms at 100,000 turns, 0.1-0.2 ms this way;
# bench/speakers.py). It serves every lookup by name the index it replaces served.
SPEAKER_TIMES = """
    CREATE INDEX idx_exchanges_name_said ON exchanges(name COLLATE NOCASE, said_at)
        WHERE name IS NOT NULL;
    DROP INDEX idx_exchanges_name;
    """
