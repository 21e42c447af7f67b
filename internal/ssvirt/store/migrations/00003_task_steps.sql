-- Power actions on VMs are tasks that run in steps (a reset halts the VM, then starts it), each waiting for the VM's
-- controller to report a generation at least the one the step wrote (target_generation), and that end in error
-- when nothing has ended them by their deadline (milliseconds; 0 is none: instantiation and VDC deletion wait for
-- as long as Kubernetes takes).

-- +goose Up
ALTER TABLE tasks ADD COLUMN step TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN target_generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN deadline BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tasks_deadline ON tasks (status, deadline);

-- +goose Down
DROP INDEX tasks_deadline;
ALTER TABLE tasks DROP COLUMN deadline;
ALTER TABLE tasks DROP COLUMN target_generation;
ALTER TABLE tasks DROP COLUMN step;
