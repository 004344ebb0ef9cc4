"""Memory entries, their search index, sessions and the audit log, and what the
brief reads from them: steps 0 -> 1, 1 -> 2 and 3 -> 4 of the ladder.

Released steps are never edited: they are moved here as they shipped.
"""

#: 0 -> 1: memory entries, their search index, sessions and the audit log.
ENTRIES = """
    CREATE TABLE memory_entries (
        -- seq is the stable integer key the FTS index and tag table point at
        seq           INTEGER PRIMARY KEY,
        id            TEXT NOT NULL UNIQUE,
        type          TEXT NOT NULL CHECK (type IN
                          ('preference', 'fact', 'instruction', 'context', 'correction')),
        content       TEXT NOT NULL,
        -- plaintext content is indexed only for public entries (see search_text)
        search_text   TEXT NOT NULL DEFAULT '',
        content_key   TEXT NOT NULL,          -- normalised-content hash, for dedup
        tags          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
        behavioral    INTEGER NOT NULL CHECK (behavioral IN (0, 1)),
        status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'candidate')),
        review_reason TEXT,
        deferred_at   TEXT,
        -- No foreign key: deleting the replacement must not resurrect a stale fact.
        superseded_by TEXT,
        superseded_at TEXT,
        confidence    REAL NOT NULL DEFAULT 0.7 CHECK (confidence BETWEEN 0 AND 1),
        pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        privacy       TEXT NOT NULL DEFAULT 'public' CHECK (privacy IN
                          ('public', 'private', 'secret')),
        source_type   TEXT NOT NULL DEFAULT 'operator',
        trust         TEXT NOT NULL DEFAULT 'high' CHECK (trust IN ('high', 'medium', 'low')),
        session_id    TEXT NOT NULL,
        group_name    TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        last_seen_at  TEXT NOT NULL
    );

    CREATE INDEX idx_entries_created ON memory_entries(created_at);
    CREATE INDEX idx_entries_type ON memory_entries(type, created_at);
    CREATE INDEX idx_entries_superseded ON memory_entries(superseded_by);
    CREATE INDEX idx_entries_status ON memory_entries(status, created_at);
    CREATE INDEX idx_entries_dedup ON memory_entries(content_key, type)
        WHERE superseded_by IS NULL;

    CREATE TABLE memory_tags (
        entry_seq   INTEGER NOT NULL,
        tag         TEXT NOT NULL COLLATE NOCASE,
        PRIMARY KEY (tag, entry_seq)
    ) WITHOUT ROWID;

    CREATE VIRTUAL TABLE memory_fts USING fts5(
        content, tags,
        content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
    );
    -- rank = bm25 with content weighted above tags
    INSERT INTO memory_fts(memory_fts, rank) VALUES ('rank', 'bm25(1.0, 0.75)');

    CREATE TRIGGER memory_entries_ai AFTER INSERT ON memory_entries BEGIN
        INSERT INTO memory_fts(rowid, content, tags)
            VALUES (new.seq, new.search_text,
                    (SELECT group_concat(value, ' ') FROM json_each(new.tags)));
        INSERT OR IGNORE INTO memory_tags(entry_seq, tag)
            SELECT new.seq, value FROM json_each(new.tags);
    END;

    CREATE TRIGGER memory_entries_ad AFTER DELETE ON memory_entries BEGIN
        DELETE FROM memory_fts WHERE rowid = old.seq;
        DELETE FROM memory_tags WHERE entry_seq = old.seq;
    END;

    CREATE TRIGGER memory_entries_au AFTER UPDATE OF search_text, tags ON memory_entries BEGIN
        DELETE FROM memory_fts WHERE rowid = old.seq;
        INSERT INTO memory_fts(rowid, content, tags)
            VALUES (new.seq, new.search_text,
                    (SELECT group_concat(value, ' ') FROM json_each(new.tags)));
        DELETE FROM memory_tags WHERE entry_seq = old.seq;
        INSERT OR IGNORE INTO memory_tags(entry_seq, tag)
            SELECT new.seq, value FROM json_each(new.tags);
    END;

    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        actor       TEXT NOT NULL CHECK (actor IN ('agent', 'operator', 'system')),
        client      TEXT NOT NULL DEFAULT '',
        started_at  TEXT NOT NULL,
        ended_at    TEXT,
        end_state   TEXT NOT NULL DEFAULT 'open'
                        CHECK (end_state IN ('open', 'ended', 'abandoned')),
        stores      INTEGER NOT NULL DEFAULT 0,
        supersedes  INTEGER NOT NULL DEFAULT 0,
        deletes     INTEGER NOT NULL DEFAULT 0
    );

    CREATE TABLE audit_log (
        id         INTEGER PRIMARY KEY,
        at         TEXT NOT NULL,
        action     TEXT NOT NULL,
        actor      TEXT NOT NULL,
        session_id TEXT,
        entry_ids  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(entry_ids)),
        count      INTEGER,
        size       INTEGER,
        detail     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
    );
    CREATE INDEX idx_audit_at ON audit_log(at);
    CREATE INDEX idx_audit_action ON audit_log(action, at);
    """


#: 1 -> 2: cached effective confidence and staleness, so the brief is an index scan.
BRIEF_CACHE = """
    ALTER TABLE memory_entries ADD COLUMN effective_confidence REAL NOT NULL DEFAULT 0.7;
    ALTER TABLE memory_entries ADD COLUMN stale INTEGER NOT NULL DEFAULT 0
        CHECK (stale IN (0, 1));
    -- a candidate's supersession waits for the person's review
    ALTER TABLE memory_entries ADD COLUMN pending_supersedes TEXT;
    UPDATE memory_entries SET effective_confidence = confidence;
    CREATE INDEX idx_entries_brief
        ON memory_entries(behavioral DESC, effective_confidence DESC, updated_at DESC, id)
        WHERE superseded_by IS NULL AND status = 'active' AND stale = 0;
    CREATE INDEX idx_entries_last_seen ON memory_entries(last_seen_at);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    """


#: 3 -> 4: the count of current entries, kept by triggers (the brief's header needs it).
CURRENT_COUNT = """
    CREATE TABLE entry_stats (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        current INTEGER NOT NULL
    );
    INSERT INTO entry_stats (id, current) VALUES (1, (
        SELECT count(*) FROM memory_entries WHERE superseded_by IS NULL AND status = 'active'
    ));
    CREATE TRIGGER entry_stats_ai AFTER INSERT ON memory_entries
        WHEN new.superseded_by IS NULL AND new.status = 'active'
    BEGIN
        UPDATE entry_stats SET current = current + 1 WHERE id = 1;
    END;
    CREATE TRIGGER entry_stats_ad AFTER DELETE ON memory_entries
        WHEN old.superseded_by IS NULL AND old.status = 'active'
    BEGIN
        UPDATE entry_stats SET current = current - 1 WHERE id = 1;
    END;
    CREATE TRIGGER entry_stats_au AFTER UPDATE OF superseded_by, status ON memory_entries
    BEGIN
        UPDATE entry_stats SET current = current
            + (new.superseded_by IS NULL AND new.status = 'active')
            - (old.superseded_by IS NULL AND old.status = 'active')
        WHERE id = 1;
    END;
    """
