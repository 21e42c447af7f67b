-- A user's session epoch counts password changes. Every token carries the epoch it was issued in and is refused
-- once the user's has moved on, so that a password change ends every session of the account at once, on every
-- replica (each request reads the account's row anyway).

-- +goose Up
ALTER TABLE users ADD COLUMN session_epoch BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN session_epoch;
