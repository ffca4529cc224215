-- Locks v2. The lock and reservation-disabled state of a component are the
-- components.locked and components.reservation_disabled columns (the components
-- writer never overwrites them; the locks code owns them).

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
