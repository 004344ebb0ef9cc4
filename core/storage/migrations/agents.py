"""Agents' rate windows and the trash their deletes go to: step 4 -> 5 of the ladder.

Released steps are never edited: they are moved here as they shipped.
"""

#: 4 -> 5: rate windows per agent, and the trash agent deletes go to.
RATES_AND_TRASH = """
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
    """
