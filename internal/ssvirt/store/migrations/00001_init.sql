-- The schema is written once for both databases: only types both SQLite and PostgreSQL accept (TEXT, BIGINT,
-- BOOLEAN), times as Unix milliseconds, and no database-specific defaults.

-- +goose Up
CREATE TABLE organizations (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    description  TEXT NOT NULL,
    enabled      BOOLEAN NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- A system administrator has no organization (org_id NULL); everyone else belongs to exactly one.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    org_id        TEXT REFERENCES organizations (id) ON DELETE CASCADE,
    role          TEXT NOT NULL CHECK (role IN ('System Administrator', 'Organization Administrator', 'vApp User')),
    password_hash TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL,
    created_at    BIGINT NOT NULL,
    CHECK ((role = 'System Administrator') = (org_id IS NULL))
);

-- k8s_state says what the namespace is known to be: PENDING (written while Kubernetes was unreachable, or
-- changed since the last successful apply), READY, or DELETING (hidden from the API; the reconciler removes the
-- namespace, then the row).
CREATE TABLE vdcs (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES organizations (id),
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    enabled         BOOLEAN NOT NULL,
    cpu_millicores  BIGINT NOT NULL,
    memory_mib      BIGINT NOT NULL,
    storage_gib     BIGINT NOT NULL,
    namespace       TEXT NOT NULL UNIQUE,
    k8s_state       TEXT NOT NULL CHECK (k8s_state IN ('PENDING', 'READY', 'DELETING')),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    UNIQUE (org_id, name)
);

-- Namespaces whose VDC row is gone (a create rolled back) but which may still exist in Kubernetes: the
-- reconciler deletes them, then the tombstone. They also keep their names from being handed out again.
CREATE TABLE namespace_tombstones (
    namespace  TEXT PRIMARY KEY,
    vdc_id     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE catalogs (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (org_id, name)
);

CREATE TABLE vapps (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL REFERENCES organizations (id),
    vdc_id            TEXT NOT NULL REFERENCES vdcs (id),
    name              TEXT NOT NULL,
    description       TEXT NOT NULL,
    catalog_item_id   TEXT NOT NULL,
    template_name     TEXT NOT NULL,
    namespace         TEXT NOT NULL,
    status            TEXT NOT NULL,
    status_message    TEXT NOT NULL,
    created_by        TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (vdc_id, name)
);

-- Logged-out sessions: a token whose id is here is refused until it would have expired anyway.
CREATE TABLE revoked_sessions (
    token_id   TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE revoked_sessions;
DROP TABLE vapps;
DROP TABLE catalogs;
DROP TABLE namespace_tombstones;
DROP TABLE vdcs;
DROP TABLE users;
DROP TABLE organizations;
