"""The schema migration ladder for a group database.

Each step moves ``PRAGMA user_version`` from ``n`` to ``n + 1`` and runs in its
own transaction. Steps are append-only: a released step is never edited.
"""

from __future__ import annotations

#: ``PRAGMA application_id`` marking a file as an Ambry group database ("AMBR").
APPLICATION_ID = 0x414D4252

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: memory entries, their search index, sessions and the audit log.
    """
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
    """,
    # 1 -> 2: cached effective confidence and staleness, so the brief is an index scan.
    """
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
    """,
    # 2 -> 3: continuity (threads, handoffs, exchanges) and attachment receipts.
    """
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
    """,
    # 3 -> 4: the count of current entries, kept by triggers (the brief's header needs it).
    """
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
    """,
    # 4 -> 5: rate windows per agent, and the trash agent deletes go to.
    """
    -- Who an agent is for its rate limits: token fingerprint and client (core.policy.ratelimit).
    ALTER TABLE sessions ADD COLUMN agent_key TEXT NOT NULL DEFAULT '';
    CREATE TABLE rate_events (
        agent   TEXT NOT NULL,
        action  TEXT NOT NULL,
        at      REAL NOT NULL            -- unix time, seconds
    );
    CREATE INDEX idx_rate_events ON rate_events(agent, action, at);

    -- An entry an agent deleted, as it was stored (sealed content stays sealed).
    CREATE TABLE trash (
        id          TEXT PRIMARY KEY,    -- the entry's id
        entry       TEXT NOT NULL CHECK (json_valid(entry)),
        deleted_at  TEXT NOT NULL,
        deleted_by  TEXT NOT NULL,       -- actor
        session_id  TEXT,
        expires_at  TEXT NOT NULL
    );
    CREATE INDEX idx_trash_expires ON trash(expires_at);
    """,
    # 5 -> 6: claims with source handles, the person's decisions on them, the claims mode.
    """
    -- A statement with its sources (core.claims): a candidate until the person verifies it.
    CREATE TABLE claims (
        seq            INTEGER PRIMARY KEY,
        id             TEXT NOT NULL UNIQUE,          -- clm-<uuid4>
        text           TEXT NOT NULL,
        kind           TEXT NOT NULL CHECK (kind IN ('preference', 'project', 'runtime_state',
                           'configuration', 'identity', 'fact')),
        status         TEXT NOT NULL DEFAULT 'candidate' CHECK (status IN
                           ('candidate', 'verified', 'rejected', 'retracted')),
        origin         TEXT NOT NULL CHECK (origin IN ('agent', 'operator', 'extraction')),
        text_key       TEXT NOT NULL,                 -- normalised-text hash, for recurrence
        recheck_days   INTEGER NOT NULL CHECK (recheck_days BETWEEN 1 AND 3650),
        session_id     TEXT,
        thread_id      TEXT,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        deferred_at    TEXT,
        verified_at    TEXT,
        recheck_due_at TEXT                           -- verified_at + recheck_days
    );
    CREATE INDEX idx_claims_status ON claims(status, updated_at);
    -- the brief reads the newest verified claims first, skipping stale ones
    CREATE INDEX idx_claims_fresh ON claims(verified_at, seq) WHERE status = 'verified';
    CREATE INDEX idx_claims_text_key ON claims(text_key);

    -- Where a claim came from, and what the source said when it was cited.
    CREATE TABLE claim_sources (
        claim_seq     INTEGER NOT NULL REFERENCES claims(seq) ON DELETE CASCADE,
        position      INTEGER NOT NULL,
        kind          TEXT NOT NULL CHECK (kind IN ('exchange', 'handoff', 'attachment',
                          'memory')),
        ref           TEXT NOT NULL,
        span_start    INTEGER,
        span_end      INTEGER,
        quote         TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        PRIMARY KEY (claim_seq, position)
    ) WITHOUT ROWID;
    CREATE INDEX idx_claim_sources_ref ON claim_sources(kind, ref);

    -- The person's decisions: the receipt of what was confirmed, by whom, when.
    CREATE TABLE claim_decisions (
        id             INTEGER PRIMARY KEY,
        claim_id       TEXT NOT NULL,
        decision       TEXT NOT NULL CHECK (decision IN
                           ('accept_verified', 'reject', 'defer', 'retract')),
        actor          TEXT NOT NULL,
        session_id     TEXT,
        at             TEXT NOT NULL,
        confirmed_text TEXT NOT NULL,
        source_states  TEXT NOT NULL CHECK (json_valid(source_states)),
        note           TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX idx_claim_decisions ON claim_decisions(claim_id, id);

    CREATE VIRTUAL TABLE claims_fts USING fts5(
        text, content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER claims_ai AFTER INSERT ON claims BEGIN
        INSERT INTO claims_fts(rowid, text) VALUES (new.seq, new.text);
    END;
    CREATE TRIGGER claims_ad AFTER DELETE ON claims BEGIN
        DELETE FROM claims_fts WHERE rowid = old.seq;
    END;

    -- The claims mode (observe, diagnostic, enforce): changed by the person only.
    CREATE TABLE claim_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    """,
    # 6 -> 7: sentence vectors for semantic search (derived data, filled in the
    # background), exchange speaker names and original times, and an index for the
    # purge of superseded entries.
    """
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
    """,
    # 7 -> 8: layers (docs/layers.md): rule-based summaries of exchanges per thread
    # (a DAG: day -> week -> month), their source turns, the group's keyword
    # statistics and links between memories and summaries. All derived from the
    # exchanges and entries, rebuilt by `ambry layers --rebuild`.
    """
    CREATE TABLE layer_summaries (
        seq          INTEGER PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,          -- sum- and 12 hex digits, from its key
        level        TEXT NOT NULL CHECK (level IN ('day', 'week', 'month')),
        thread_id    TEXT,                          -- NULL: turns filed under no thread
        session_id   TEXT,                          -- day summaries: the session summarised
        period       TEXT NOT NULL,                 -- 2023-05-08, 2023-W19, 2023-05
        start_at     TEXT NOT NULL,
        end_at       TEXT NOT NULL,
        hook         TEXT NOT NULL,
        points       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(points)),
        quotes       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(quotes)),
        keywords     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(keywords)),
        turn_count   INTEGER NOT NULL,
        terms        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(terms)), -- in layer_vocab
        source_key   TEXT NOT NULL,                 -- what it was built from; changes rebuild it
        method       TEXT NOT NULL DEFAULT 'rules',
        built_at     TEXT NOT NULL
    );
    CREATE INDEX idx_layer_summaries_thread ON layer_summaries(thread_id, level, end_at);
    CREATE INDEX idx_layer_summaries_end ON layer_summaries(level, end_at);
    CREATE TABLE layer_children (
        parent_id TEXT NOT NULL REFERENCES layer_summaries(id) ON DELETE CASCADE,
        child_id  TEXT NOT NULL REFERENCES layer_summaries(id) ON DELETE CASCADE,
        PRIMARY KEY (parent_id, child_id)
    ) WITHOUT ROWID;
    CREATE INDEX idx_layer_children_child ON layer_children(child_id);
    -- the verbatim turns behind a day summary (weeks and months reach them through children)
    CREATE TABLE layer_sources (
        summary_id   TEXT NOT NULL REFERENCES layer_summaries(id) ON DELETE CASCADE,
        exchange_seq INTEGER NOT NULL,
        PRIMARY KEY (summary_id, exchange_seq)
    ) WITHOUT ROWID;
    CREATE INDEX idx_layer_sources_seq ON layer_sources(exchange_seq);
    CREATE TRIGGER layer_sources_ad AFTER DELETE ON exchanges BEGIN
        DELETE FROM layer_sources WHERE exchange_seq = old.seq;
    END;
    CREATE VIRTUAL TABLE layer_fts USING fts5(
        text, tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER layer_summaries_ad AFTER DELETE ON layer_summaries BEGIN
        DELETE FROM layer_fts WHERE rowid = old.seq;
    END;
    -- keyword statistics: in how many day summaries each word occurs (TF-IDF)
    CREATE TABLE layer_vocab (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE layer_links (
        src        TEXT NOT NULL,
        dst        TEXT NOT NULL,
        strength   TEXT NOT NULL CHECK (strength IN ('strong', 'weak')),
        reason     TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (src, dst)
    ) WITHOUT ROWID;
    CREATE INDEX idx_layer_links_dst ON layer_links(dst);
    """,
    # 8 -> 9: day-summary points' sources (docs/layers.md); old days are drawn again at once.
    """ALTER TABLE layer_summaries ADD COLUMN point_sources TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(point_sources));
    UPDATE layer_summaries SET source_key = '' WHERE level = 'day';
    DELETE FROM meta WHERE key = 'layers_compressed_at';""",
)

SCHEMA_VERSION = len(MIGRATIONS)
