-- The TLS key each BMC presented when it was first registered: the hex
-- SHA-256 of its certificate's SubjectPublicKeyInfo ('' none pinned yet).
-- reds sends no credentials to a BMC presenting another key (a device
-- spoofing its MAC while the switch still shows the real BMC's port);
-- DELETE /v1/endpoints/{xname}/tls-key clears it for a BMC whose key
-- really changed; the next presence check at its registered address (or
-- its next registration) pins the new one, as it pins rows stored before
-- this column.
ALTER TABLE endpoints ADD COLUMN tls_key TEXT NOT NULL DEFAULT '';
