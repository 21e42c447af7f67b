package store

import (
	"context"
	"time"
)

// RevokeSession records that the token tokenID was logged out; it stays refused until expiresAt.
func (s *Store) RevokeSession(ctx context.Context, tokenID string, expiresAt time.Time) error {
	_, err := s.exec(ctx, "INSERT INTO revoked_sessions (token_id, expires_at) VALUES (?, ?) ON CONFLICT (token_id) DO NOTHING",
		tokenID, expiresAt.UnixMilli())
	return err
}

// SessionRevoked says whether tokenID was logged out.
func (s *Store) SessionRevoked(ctx context.Context, tokenID string) (bool, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM revoked_sessions WHERE token_id = ?", tokenID).Scan(&n)
	return n > 0, classify(err)
}

// PruneRevokedSessions forgets revocations of tokens that have expired anyway.
func (s *Store) PruneRevokedSessions(ctx context.Context) error {
	_, err := s.exec(ctx, "DELETE FROM revoked_sessions WHERE expires_at < ?", now())
	return err
}
