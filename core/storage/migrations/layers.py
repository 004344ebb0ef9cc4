"""Layers (docs/layers.md): summaries of exchanges and their sources: steps
7 -> 8 and 8 -> 9 of the ladder.

Released steps are never edited: they are moved here as they shipped.
"""

#: 7 -> 8: layers (docs/layers.md): rule-based summaries of exchanges per thread
# (a DAG: day -> week -> month), their source turns, the group's keyword
# statistics and links between memories and summaries. All derived from the
# exchanges and entries, rebuilt by `ambry layers --rebuild`.
LAYERS = """
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
    """


#: 8 -> 9: day-summary points' sources (docs/layers.md); old days are drawn again at once.
POINT_SOURCES = """ALTER TABLE layer_summaries ADD COLUMN point_sources TEXT NOT NULL DEFAULT '[]'
        CHECK (json_valid(point_sources));
    UPDATE layer_summaries SET source_key = '' WHERE level = 'day';
    DELETE FROM meta WHERE key = 'layers_compressed_at';"""
