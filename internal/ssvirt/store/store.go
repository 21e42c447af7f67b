// Package store is ssvirt-api's database: organizations, users, VDCs, catalogs, vApps and revoked sessions, in
// SQLite (embedded, pure Go) or PostgreSQL (pgx), with the same versioned migrations and the same queries. Every
// query is parameterised; every read that a tenant can reach takes a Scope, so that isolation is decided in SQL
// and not left to each handler.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Drivers accepted by Open.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

//go:embed migrations/*.sql
var migrations embed.FS

var (
	// ErrNotFound: no such row, or not one the caller's scope may see (the two are indistinguishable on purpose).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique name is taken, or the row is still referenced.
	ErrConflict = errors.New("conflict")
)

// Store is an open, migrated database.
type Store struct {
	db       *sql.DB
	postgres bool
	lock     *os.File // SQLite's <db>.lock, held while open
}

// Open connects to driver (DriverSQLite with a file path or ":memory:", DriverPostgres with a pgx connection
// string) and applies the migrations not yet applied.
func Open(ctx context.Context, driver, dsn string) (*Store, error) {
	var (
		db      *sql.DB
		lock    *os.File
		err     error
		dialect goose.Dialect
	)
	switch driver {
	case DriverSQLite:
		if path := sqliteFile(dsn); path != "" {
			log := logr.FromContextOrDiscard(ctx)
			if lock, err = lockFile(ctx, path, func() {
				log.Info("another process has the database open; waiting until it closes it", "path", path)
			}); err != nil {
				return nil, err
			}
		}
		// One connection: SQLite serialises writers anyway, and a single connection turns "database is locked"
		// under concurrent requests into queueing. Foreign keys are off by default in SQLite.
		db, err = sql.Open("sqlite", sqliteDSN(dsn))
		if err == nil {
			db.SetMaxOpenConns(1)
		}
		dialect = goose.DialectSQLite3
	case DriverPostgres:
		db, err = sql.Open("pgx", dsn)
		if err == nil {
			db.SetMaxOpenConns(20)
			db.SetConnMaxIdleTime(time.Minute)
		}
		dialect = goose.DialectPostgres
	default:
		return nil, fmt.Errorf("database driver %q: want %s or %s", driver, DriverSQLite, DriverPostgres)
	}
	if err != nil {
		unlock(lock)
		return nil, err
	}
	s := &Store{db: db, postgres: driver == DriverPostgres, lock: lock}
	if err := s.migrate(ctx, dialect); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func sqliteDSN(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	dsn := path + sep + "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)"
	// A write-ahead log is a file beside the database's: an in-memory database has none.
	if sqliteFile(path) != "" {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	return dsn
}

func (s *Store) migrate(ctx context.Context, dialect goose.Dialect) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, s.db, sub)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	err := s.db.Close()
	unlock(s.lock)
	return err
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// q rewrites a query written with ? placeholders for the driver: PostgreSQL wants $1, $2, ...
func (s *Store) q(query string) string {
	if !s.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := s.db.ExecContext(ctx, s.q(query), args...)
	return res, classify(err)
}

func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.q(query), args...)
}

// classify maps the drivers' constraint violations to ErrConflict, keeping the original for the log.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "23503") {
		return fmt.Errorf("%w: %s", ErrConflict, pgErr.Message)
	}
	var sqlErr *sqlite.Error
	if errors.As(err, &sqlErr) {
		switch sqlErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %s", ErrConflict, sqlErr.Error())
		}
	}
	return err
}

func mustAffect(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Page selects a window of a list: Page counts from 1.
type Page struct {
	Page, PageSize int
}

func (p Page) limitOffset() (int, int) {
	size := p.PageSize
	if size <= 0 {
		size = 25
	}
	page := p.Page
	if page <= 0 {
		page = 1
	}
	return size, (page - 1) * size
}

// Scope limits what a caller sees: OrgID "" is everything (system administrators), otherwise one organization.
type Scope struct {
	OrgID string
}

// where returns " AND <column> = ?" and its argument when the scope is one organization.
func (sc Scope) where(column string) (string, []any) {
	if sc.OrgID == "" {
		return "", nil
	}
	return " AND " + column + " = ?", []any{sc.OrgID}
}

func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
