"""Threads, handoffs, exchanges and attachment receipts: step 2 -> 3 of the ladder;
ids of turns and session handoffs never given again: step 11 -> 12.

Released steps are never edited: they are moved here as they shipped.
"""

#: 2 -> 3: continuity (threads, handoffs, exchanges) and attachment receipts.
CONTINUITY = """
    CREATE TABLE threads (
        id         TEXT PRIMARY KEY,
        title      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX idx_threads_title ON threads(title COLLATE NOCASE);
    ALTER TABLE sessions ADD COLUMN thread_id TEXT REFERENCES threads(id) ON DELETE SET NULL;

    -- One current handoff per thread is its highest version; older ones are kept.
    CREATE TABLE thread_handoffs (
        id               INTEGER PRIMARY KEY,
        thread_id        TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        version          INTEGER NOT NULL,
        markdown         TEXT NOT NULL,
        session_id       TEXT,
        compaction_count INTEGER NOT NULL DEFAULT 0,
        created_at       TEXT NOT NULL,
        UNIQUE (thread_id, version)
    );

    -- Written at session_end, delivered once to the next session of the same thread.
    CREATE TABLE session_handoffs (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,
        thread_id   TEXT REFERENCES threads(id) ON DELETE CASCADE,
        markdown    TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        consumed_by TEXT,
        consumed_at TEXT
    );
    CREATE INDEX idx_session_handoffs_pending ON session_handoffs(thread_id, created_at)
        WHERE consumed_at IS NULL;

    -- Episodic memory: the turns of a conversation.
    CREATE TABLE exchanges (
        seq        INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        thread_id  TEXT REFERENCES threads(id) ON DELETE SET NULL,
        speaker    TEXT NOT NULL,
        text       TEXT NOT NULL,
        turn       TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX idx_exchanges_created ON exchanges(created_at);
    CREATE INDEX idx_exchanges_thread ON exchanges(thread_id, created_at);
    CREATE VIRTUAL TABLE exchanges_fts USING fts5(
        text, content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER exchanges_ai AFTER INSERT ON exchanges BEGIN
        INSERT INTO exchanges_fts(rowid, text) VALUES (new.seq, new.text);
    END;
    CREATE TRIGGER exchanges_ad AFTER DELETE ON exchanges BEGIN
        DELETE FROM exchanges_fts WHERE rowid = old.seq;
    END;

    -- Evidence kept as receipts, not copies (seed 004 §1.6).
    CREATE TABLE attachment_receipts (
        id             TEXT PRIMARY KEY,           -- att_ + 16 hex of the SHA-256
        sha256         TEXT NOT NULL UNIQUE,
        kind           TEXT NOT NULL CHECK (kind IN ('text', 'document', 'image', 'binary')),
        filename       TEXT NOT NULL,
        mime_type      TEXT NOT NULL,
        size           INTEGER NOT NULL,
        source_path    TEXT NOT NULL,
        source_status  TEXT NOT NULL DEFAULT 'verified'
                           CHECK (source_status IN ('verified', 'changed', 'missing',
                                                    'unreadable')),
        checked_at     TEXT NOT NULL,
        extracted_text TEXT,
        excerpt        TEXT NOT NULL DEFAULT '',
        observation    TEXT NOT NULL DEFAULT '',
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL
    );
    CREATE TABLE attachment_receipt_turns (
        id          INTEGER PRIMARY KEY,
        receipt_id  TEXT NOT NULL REFERENCES attachment_receipts(id) ON DELETE CASCADE,
        thread_id   TEXT REFERENCES threads(id) ON DELETE SET NULL,
        session_id  TEXT,
        turn        TEXT,
        source_path TEXT NOT NULL,
        observation TEXT NOT NULL DEFAULT '',
        linked_at   TEXT NOT NULL
    );
    CREATE INDEX idx_receipt_turns_receipt ON attachment_receipt_turns(receipt_id, linked_at);
    CREATE INDEX idx_receipt_turns_thread ON attachment_receipt_turns(thread_id, linked_at);
    """


#: 11 -> 12: a turn's and a session handoff's id is never given to another
#: (core/storage/fresh_ids.py): the highest deleted is kept, new rows come after it.
FRESH_IDS = """
    CREATE TRIGGER exchanges_deleted_up_to AFTER DELETE ON exchanges BEGIN
        INSERT INTO meta (key, value) VALUES ('exchanges_deleted_up_to', old.seq)
        ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), old.seq);
    END;
    CREATE TRIGGER session_handoffs_deleted_up_to AFTER DELETE ON session_handoffs BEGIN
        INSERT INTO meta (key, value) VALUES ('session_handoffs_deleted_up_to', old.id)
        ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), old.id);
    END;
    """
