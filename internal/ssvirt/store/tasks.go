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
	// Step is where a task that runs in steps is (see the Step constants); TargetGeneration is the generation of
	// its object that the step waits to see observed.
	Step             string
	TargetGeneration int64
	// Deadline, when set, is when a task still running ends in error.
	Deadline time.Time
}

const taskColumns = "id, org_id, operation, owner_kind, owner_id, owner_name, user_id, user_name, status, message, created_at, " +
	"ended_at, step, target_generation, deadline"

func scanTask(row scanner) (Task, error) {
	var t Task
	var org *string
	var created, ended, deadline int64
	err := row.Scan(&t.ID, &org, &t.Operation, &t.OwnerKind, &t.OwnerID, &t.OwnerName, &t.UserID, &t.UserName, &t.Status,
		&t.Message, &created, &ended, &t.Step, &t.TargetGeneration, &deadline)
	if org != nil {
		t.OrgID = *org
	}
	t.CreatedAt = fromMillis(created)
	if ended != 0 {
		t.EndedAt = fromMillis(ended)
	}
	if deadline != 0 {
		t.Deadline = fromMillis(deadline)
	}
	return t, classify(err)
}

// CreateTask inserts t, running, with a new ID.
func (s *Store) CreateTask(ctx context.Context, t Task) (Task, error) {
	t.ID = uuid.NewString()
	t.Status = TaskRunning
	c := now()
	t.CreatedAt = fromMillis(c)
	var deadline int64
	if !t.Deadline.IsZero() {
		deadline = t.Deadline.UnixMilli()
	}
	_, err := s.exec(ctx, "INSERT INTO tasks ("+taskColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
		t.ID, nullable(t.OrgID), t.Operation, t.OwnerKind, t.OwnerID, t.OwnerName, t.UserID, t.UserName, t.Status, t.Message, c,
		t.Step, t.TargetGeneration, deadline)
	return t, err
}

// GetTask returns a task the scope may see.
func (s *Store) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	cond, args := sc.where("org_id")
	return scanTask(s.queryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// LatestTask returns the newest task of operation on ownerID.
func (s *Store) LatestTask(ctx context.Context, ownerID, operation string) (Task, error) {
	return scanTask(s.queryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE owner_id = ? AND operation = ? ORDER BY created_at DESC, id LIMIT 1",
		ownerID, operation))
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

// SupersedeTasks ends the running tasks of operations on ownerID in error with message: a later action on the
// owner replaced what they waited for.
func (s *Store) SupersedeTasks(ctx context.Context, ownerID string, operations []string, message string) error {
	for _, op := range operations {
		if err := s.FinishTasks(ctx, ownerID, op, TaskError, message); err != nil {
			return err
		}
	}
	return nil
}

// RunningTasks lists the running tasks on ownerID, oldest first.
func (s *Store) RunningTasks(ctx context.Context, ownerID string) ([]Task, error) {
	return all(ctx, s, "SELECT "+taskColumns+" FROM tasks WHERE owner_id = ? AND status = 'running' ORDER BY created_at, id",
		[]any{ownerID}, scanTask)
}

// ExpiredTasks lists the running tasks whose deadline is before t.
func (s *Store) ExpiredTasks(ctx context.Context, t time.Time) ([]Task, error) {
	return all(ctx, s, "SELECT "+taskColumns+" FROM tasks WHERE status = 'running' AND deadline > 0 AND deadline < ? ORDER BY deadline, id",
		[]any{t.UnixMilli()}, scanTask)
}

// AdvanceTask moves a running task from step from to step to, waiting for generation, and says whether it did:
// of several processes that see the same step end, one moves the task on and acts on it.
func (s *Store) AdvanceTask(ctx context.Context, id, from, to string, generation int64) (bool, error) {
	res, err := s.exec(ctx, "UPDATE tasks SET step = ?, target_generation = ? WHERE id = ? AND status = 'running' AND step = ?",
		to, generation, id, from)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
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

// PowerOperations are the operations on VMs; a VM runs at most one of them at a time.
var PowerOperations = []string{OpPowerOn, OpPowerOff, OpReset}

// Steps of a power task.
const (
	// StepPatching: the VM's run strategy is being written; nothing is awaited yet.
	StepPatching = "patching"
	// StepWaiting: a power on or off waits for the VM to report the state it asked for.
	StepWaiting = "waiting"
	// StepHalting and StepStarting: a reset waits for the VM to stop, then to run again.
	StepHalting  = "halting"
	StepStarting = "starting"
)
