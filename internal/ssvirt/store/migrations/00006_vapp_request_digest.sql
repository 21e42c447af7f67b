-- What an instantiation asked for (catalog item, description, parameters), as a keyed digest: a client that got no
-- answer sends its request again, and the same request is answered with the vApp it made rather than a conflict. A
-- digest, not the parameters, because parameters may hold secrets; keyed, so that it cannot be tested offline.

-- +goose Up
ALTER TABLE vapps ADD COLUMN request_digest TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE vapps DROP COLUMN request_digest;
