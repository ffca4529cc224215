-- The component history again (0017 stored a row per component, which
-- doubled the time of a bulk StateData of 10,000): one row per write and
-- distinct change, with the components it changed that way, so a bulk
-- change of 10,000 components is one row. ids are the xnames, delimited by
-- commas at both ends (',x1,x2,'), found with ids LIKE '%,x1,%'; n is how
-- many. The history of 0017 is dropped with it.
DROP TABLE component_history;
CREATE TABLE component_history (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    ts        TEXT NOT NULL,
    old_state TEXT NOT NULL,
    old_flag  TEXT NOT NULL,
    state     TEXT NOT NULL,
    flag      TEXT NOT NULL,
    cause     TEXT NOT NULL,
    agent     TEXT NOT NULL,
    n         INTEGER NOT NULL,
    ids       TEXT NOT NULL
);
