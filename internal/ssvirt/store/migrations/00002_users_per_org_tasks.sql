-- User names are unique per organization, as in Cloud Director (system administrators, who have none, share one
-- namespace of names). The column's UNIQUE constraint goes by rebuilding the table, which both databases can do
-- with the same statements; nothing references users.
-- Tasks are what a 202 answer points at: the operation, what it works on, and how it ended.

-- +goose Up
CREATE TABLE users_v2 (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL,
    org_id        TEXT REFERENCES organizations (id) ON DELETE CASCADE,
    role          TEXT NOT NULL CHECK (role IN ('System Administrator', 'Organization Administrator', 'vApp User')),
    password_hash TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL,
    created_at    BIGINT NOT NULL,
    CHECK ((role = 'System Administrator') = (org_id IS NULL))
);
INSERT INTO users_v2 (id, username, org_id, role, password_hash, enabled, created_at)
    SELECT id, username, org_id, role, password_hash, enabled, created_at FROM users;
DROP TABLE users;
ALTER TABLE users_v2 RENAME TO users;
CREATE UNIQUE INDEX users_org_username ON users (COALESCE(org_id, ''), username);

-- org_id is NULL for a system administrator's task outside any organization. No foreign keys: a task tells how
-- an operation ended after what it was about is gone (a deleted VDC). ended_at is 0 while the task runs.
CREATE TABLE tasks (
    id          TEXT PRIMARY KEY,
    org_id      TEXT,
    operation   TEXT NOT NULL,
    owner_kind  TEXT NOT NULL,
    owner_id    TEXT NOT NULL,
    owner_name  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'success', 'error')),
    message     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    ended_at    BIGINT NOT NULL
);
CREATE INDEX tasks_owner ON tasks (owner_id, status);

-- +goose Down
DROP TABLE tasks;
DROP INDEX users_org_username;
CREATE UNIQUE INDEX users_username ON users (username);
