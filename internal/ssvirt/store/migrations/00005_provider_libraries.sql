-- A provider content library: one a system administrator creates without naming an organization (Cloud Director's
-- libraryType PROVIDER, owned by the System organization, which has no row, hence a table of its own). Its items,
-- like every catalog's, are the cluster's shared Templates; only system administrators see it.

-- +goose Up
CREATE TABLE provider_libraries (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE provider_libraries;
