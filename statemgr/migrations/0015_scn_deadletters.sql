-- SCN deliveries a subscriber refused for good (4xx other than 408/429),
-- moved aside so that later SCNs are not held behind them. Only the newest
-- rows are kept (deadLetterKeep).
CREATE TABLE scn_deadletters (
    id           INTEGER PRIMARY KEY,
    subscription BIGINT  NOT NULL,
    subscriber   TEXT    NOT NULL,
    seq          BIGINT  NOT NULL,
    epoch        BIGINT  NOT NULL,
    error        TEXT    NOT NULL,
    created      TEXT    NOT NULL,
    body         TEXT    NOT NULL
);
