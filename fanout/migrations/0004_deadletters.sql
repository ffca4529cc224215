-- Deliveries a subscriber refused for good (4xx other than 408/429), moved
-- aside so that later SCNs to that subscriber are not held behind them. Only
-- the newest rows are kept (deadLetterKeep).
CREATE TABLE deadletters (
    id      INTEGER PRIMARY KEY,
    url     TEXT    NOT NULL,
    error   TEXT    NOT NULL,
    created BIGINT  NOT NULL,
    body    TEXT    NOT NULL
);
