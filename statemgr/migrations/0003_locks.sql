-- Locks v2. component_locks is the source of truth for the lock and the
-- reservation-disabled state of a component (a row exists only while one of them is
-- set); the store mirrors both into components.locked and
-- components.reservation_disabled in the same transaction for readers of that table.
CREATE TABLE component_locks (
    component_id         TEXT PRIMARY KEY REFERENCES components(id) ON DELETE CASCADE,
    locked               INTEGER NOT NULL DEFAULT 0,
    reservation_disabled INTEGER NOT NULL DEFAULT 0
);

-- Reservations: at most one per component. Times are Unix milliseconds;
-- expires_at NULL means the reservation never expires (admin reservations).
-- Keys are stored as SHA-256 hex digests only: the plaintext keys are returned once,
-- to the caller that created the reservation, and never again.
CREATE TABLE reservations (
    component_id         TEXT PRIMARY KEY REFERENCES components(id) ON DELETE CASCADE,
    created_at           BIGINT NOT NULL,
    expires_at           BIGINT,
    reservation_key_hash TEXT NOT NULL,
    deputy_key_hash      TEXT NOT NULL
);
CREATE INDEX reservations_expires_at ON reservations (expires_at) WHERE expires_at IS NOT NULL;
