"""The gram index of words inside Chinese, Japanese and Korean text: step 10 -> 11
of the ladder.

The tokenizer of ``memory_fts`` and ``exchanges_fts`` keeps a run of such
characters as one token, so a word inside a sentence is no match. Each memory and
turn now keeps the pairs of neighbouring characters of its unspaced runs (and
its pictographs) in a column, written in Python where the row is written
(:func:`core.storage.fts.text_grams`), and a second index holds them: ``ascii``
tokenizes on the spaces between pairs only, so every pair, kana mark or emoji
stays one token (``unicode61`` drops symbols such as ``☕`` and splits pairs
holding ``・``).
``detail=none``: a piece is found or not, its position never matters.

Released steps are never edited: they are moved here as they shipped.
"""

#: 10 -> 11: the gram columns and their indexes, kept by triggers like
# ``memory_fts``; existing rows are filled by the ``text_grams`` function the
# ladder registers (only rows holding such characters are written), memories'
# index by their update trigger, turns' by a copy.
GRAMS = """
    ALTER TABLE memory_entries ADD COLUMN search_grams TEXT NOT NULL DEFAULT '';
    ALTER TABLE exchanges ADD COLUMN text_grams TEXT NOT NULL DEFAULT '';

    CREATE VIRTUAL TABLE memory_grams USING fts5(
        grams, content='', contentless_delete=1, detail=none, tokenize='ascii'
    );
    CREATE VIRTUAL TABLE exchange_grams USING fts5(
        grams, content='', contentless_delete=1, detail=none, tokenize='ascii'
    );

    CREATE TRIGGER memory_grams_ai AFTER INSERT ON memory_entries
        WHEN new.search_grams != '' BEGIN
        INSERT INTO memory_grams(rowid, grams) VALUES (new.seq, new.search_grams);
    END;
    CREATE TRIGGER memory_grams_ad AFTER DELETE ON memory_entries
        WHEN old.search_grams != '' BEGIN
        DELETE FROM memory_grams WHERE rowid = old.seq;
    END;
    CREATE TRIGGER memory_grams_au AFTER UPDATE OF search_grams ON memory_entries BEGIN
        DELETE FROM memory_grams WHERE rowid = old.seq AND old.search_grams != '';
        INSERT INTO memory_grams(rowid, grams)
            SELECT new.seq, new.search_grams WHERE new.search_grams != '';
    END;
    CREATE TRIGGER exchange_grams_ai AFTER INSERT ON exchanges
        WHEN new.text_grams != '' BEGIN
        INSERT INTO exchange_grams(rowid, grams) VALUES (new.seq, new.text_grams);
    END;
    CREATE TRIGGER exchange_grams_ad AFTER DELETE ON exchanges
        WHEN old.text_grams != '' BEGIN
        DELETE FROM exchange_grams WHERE rowid = old.seq;
    END;

    UPDATE memory_entries SET search_grams = made.grams FROM (
        SELECT seq, text_grams(search_text || char(10) || coalesce(
            (SELECT group_concat(value, char(10)) FROM json_each(tags)), '')) AS grams
        FROM memory_entries
    ) AS made WHERE made.seq = memory_entries.seq AND made.grams != '';
    UPDATE exchanges SET text_grams = made.grams FROM (
        SELECT seq, text_grams(text) AS grams FROM exchanges
    ) AS made WHERE made.seq = exchanges.seq AND made.grams != '';
    -- turns are never edited, so no trigger fills their index on an update
    INSERT INTO exchange_grams(rowid, grams)
        SELECT seq, text_grams FROM exchanges WHERE text_grams != '';
    """
