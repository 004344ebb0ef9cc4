"""Claims with source handles and the person's decisions on them: step 5 -> 6 of
the ladder.

Released steps are never edited: they are moved here as they shipped.
"""

#: 5 -> 6: claims with source handles, the person's decisions on them, the claims mode.
CLAIMS = """
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
    """
