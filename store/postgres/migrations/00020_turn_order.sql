-- +goose Up
-- Turns captured with the same timestamp keep their conversation order
-- (seed 001's signal and live-signal detection read turns in order): seq is
-- the capture order, assigned increasing by the capturing engine; listings
-- order by (ts, seq, id). Turns stored before have seq 0 and keep the
-- former (ts, id) order among themselves.
ALTER TABLE experience_turns ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
DROP INDEX experience_turns_ts;
DROP INDEX experience_turns_task;
CREATE INDEX experience_turns_ts ON experience_turns (project, ts, seq, id);
CREATE INDEX experience_turns_task ON experience_turns (project, task_id, ts, seq, id);

-- +goose Down
DROP INDEX experience_turns_ts;
DROP INDEX experience_turns_task;
CREATE INDEX experience_turns_ts ON experience_turns (project, ts, id);
CREATE INDEX experience_turns_task ON experience_turns (project, task_id, ts, id);
ALTER TABLE experience_turns DROP COLUMN seq;
