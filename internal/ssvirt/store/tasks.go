package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Task statuses, as Cloud Director names them.
const (
	TaskRunning = "running"
	TaskSuccess = "success"
	TaskError   = "error"
)

// Task is an operation that finishes after its request was answered. Whoever sees the operation end (a
// reconciler, usually) finishes it; finishing is idempotent, so any number of them may try.
type Task struct {
	ID, OrgID, Operation              string
	OwnerKind, OwnerID, OwnerName     string
	UserID, UserName, Status, Message string
	CreatedAt, EndedAt                time.Time
}

const taskColumns = "id, org_id, operation, owner_kind, owner_id, owner_name, user_id, user_name, status, message, created_at, ended_at"

func scanTask(row scanner) (Task, error) {
	var t Task
	var org *string
	var created, ended int64
	err := row.Scan(&t.ID, &org, &t.Operation, &t.OwnerKind, &t.OwnerID, &t.OwnerName, &t.UserID, &t.UserName, &t.Status,
		&t.Message, &created, &ended)
	if org != nil {
		t.OrgID = *org
	}
	t.CreatedAt = fromMillis(created)
	if ended != 0 {
		t.EndedAt = fromMillis(ended)
	}
	return t, classify(err)
}

// CreateTask inserts t, running, with a new ID.
func (s *Store) CreateTask(ctx context.Context, t Task) (Task, error) {
	t.ID = uuid.NewString()
	t.Status = TaskRunning
	c := now()
	t.CreatedAt = fromMillis(c)
	_, err := s.exec(ctx, "INSERT INTO tasks ("+taskColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
		t.ID, nullable(t.OrgID), t.Operation, t.OwnerKind, t.OwnerID, t.OwnerName, t.UserID, t.UserName, t.Status, t.Message, c)
	return t, err
}

// GetTask returns a task the scope may see.
func (s *Store) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	cond, args := sc.where("org_id")
	return scanTask(s.queryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// FinishTasks ends the running tasks of operation on ownerID with status (TaskSuccess or TaskError) and message;
// tasks that already ended keep how they ended.
func (s *Store) FinishTasks(ctx context.Context, ownerID, operation, status, message string) error {
	_, err := s.exec(ctx, "UPDATE tasks SET status = ?, message = ?, ended_at = ? WHERE owner_id = ? AND operation = ? AND status = 'running'",
		status, message, now(), ownerID, operation)
	return err
}

// FinishTask ends one running task.
func (s *Store) FinishTask(ctx context.Context, id, status, message string) error {
	_, err := s.exec(ctx, "UPDATE tasks SET status = ?, message = ?, ended_at = ? WHERE id = ? AND status = 'running'",
		status, message, now(), id)
	return err
}

// NoteTask records what a running task is waiting for (the last error of an operation that is retried).
func (s *Store) NoteTask(ctx context.Context, ownerID, operation, message string) error {
	_, err := s.exec(ctx, "UPDATE tasks SET message = ? WHERE owner_id = ? AND operation = ? AND status = 'running'",
		message, ownerID, operation)
	return err
}

// PruneTasks forgets tasks that ended before cutoff.
func (s *Store) PruneTasks(ctx context.Context, cutoff time.Time) error {
	_, err := s.exec(ctx, "DELETE FROM tasks WHERE status <> 'running' AND ended_at < ?", cutoff.UnixMilli())
	return err
}

// Task operations.
const (
	OpInstantiate = "vappInstantiate"
	OpDeleteVDC   = "vdcDelete"
	OpPowerOn     = "vmPowerOn"
	OpPowerOff    = "vmPowerOff"
	OpReset       = "vmReset"
)
