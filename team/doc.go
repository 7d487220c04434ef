// Package team holds the domain types and every decision of kaizen's team
// coordination subsystem (seed 004): teams and roles, the task graph with
// leases and fencing, the typed message bus vocabulary, the coordinator
// state machine and routing table, and the ten collaboration patterns
// CP-1 … CP-10 as pure reducers, with their composition rules, selection
// rules and state diagrams.
//
// The package is pure: no I/O, no clock (now is a parameter), no randomness,
// no global mutable state. A service persists everything (SQLite or
// PostgreSQL) and calls these functions inside its transactions.
//
// # Task graph
//
// [ValidateTask] and [ValidateGraph] check tasks and refuse unknown
// dependencies and cycles ([CycleError] names the cycle). [Ready] is the
// ready set in claim order; [Propagate] blocks the dependants of failed or
// cancelled tasks and unblocks them after a retry. The status transition
// table is [CanTransition]; [Claim] checks readiness, role, owner and
// capabilities and grants a lease whose epoch is the fencing token
// ([Grant], [Heartbeat], [Expire], [Report], [CheckFence]). A report
// carrying another epoch than the task's current one is refused with a
// [FenceError]. [TopoLayers] groups a plan into dependency layers (CP-6's
// increments).
//
// # Messages
//
// [Message] carries a [MessageType]; the [Registry] decodes each built-in
// type's payload strictly (unknown fields refused, required fields and
// ranges checked) into its Go struct ([ReviewResult], [Vote], [Escalate],
// [SwarmDiagnosis] …) and lets user-defined types carry any JSON. API field
// names are snake_case; the seed's camelCase spellings (vote.proposalId,
// sync_checkpoint.trackA_state, sync point trackA_deliverable, escalate
// diagnosisHistory …) are accepted on input as aliases. Deliveries move
// forward only: delivered → read → acknowledged → acted_on, with
// redelivery after a visibility timeout until acknowledged ([Deliver]).
//
// # Pattern runs
//
// A [Run] is one pattern run as a persisted state machine. [Start] creates
// it from a [RunSpec] (pattern, team, parent, config, input); [Step]
// advances it by one [Event] — a bus message, a change of a task it created,
// a timer it set, a child run that finished, a user's reply — and returns
// the new run plus [Command] values (create/cancel/pause/resume tasks, send
// messages, set/cancel timers, start child runs, ask the user, record team
// decisions and learnings, finish) that the service executes in the same
// transaction that stores the run.
//
// Step depends only on (run, event, now): the run's whole state, including
// the config it started with and the pattern's own state (Run.Data), is in
// the Run value, which round-trips through encoding/json. After a crash the
// service loads the run and delivers the next event; re-delivered events are
// recognised (message seq already handled, task status already recorded,
// timer cancelled or re-set, child already finished) and change nothing, so
// at-least-once delivery is safe. The input run is never modified.
//
// Tasks a run creates carry a run-local key (Command.Key); the service
// stores it on the task (Task.RunKey) and puts it on task events
// (Event.TaskKey), and on message events when the message names one of the
// run's tasks. A task completed with a result that decodes as the task's
// expected report type (TaskSpec.Expect) is handled like that message.
//
// Every run ends with an [Outcome] for the learning system: status (success,
// failed, escalated, degraded), duration, iterations, errors, retries and
// pattern data. "Escalated" means the service must bring the summary to the
// user. Runs never exceed Run.MaxIterations, and every wait is bounded by a
// timer, a task the run created, a child run or a question to the user.
//
// # Decisions where the seed is silent
//
//   - Dependencies: a failed, cancelled or blocked dependency blocks its
//     pending dependants ([Propagate]); retrying it unblocks them.
//   - Attempts count leases granted, so an expired attempt is counted.
//   - CP-1: a stage task completed without a report counts as passed (the
//     seed's gate is "every stage task completed"); the 5 iterations are
//     verification rounds, the 5th failing one goes to the user.
//   - CP-2: its gate is the verdict, so a review task completed without a
//     review_result waits for the message. A design issue or a fix task that
//     fails escalates to CP-5 (or CP-7, or CP-1 to replan, by input).
//   - CP-4: the approval ratio is approvals / votes received, abstentions
//     included, as in the seed's tally; at the default 0.67, 2 approvals of
//     3 (0.667) do not pass. The extension for < N/2 votes is granted once
//     per round. All ABSTAIN → the input's default decision (REJECT).
//   - CP-5: L3 waits EscalationConfig.UserTimeout (ours: 30 min) before the
//     most conservative option is taken as a WORKAROUND.
//   - CP-6: max_attempts 3 counts implementation attempts; the third failure
//     rolls back and blocks. Failing increment tests alone start a nested
//     CP-2 (the seed's feedback rule). Bisecting reverts increments
//     cumulatively from the last until the full suite passes.
//   - CP-7: specificity of a fix is [Specificity]; the fixer is the author of
//     the chosen diagnosis unless named.
//   - CP-9: a blocked track is swarmed once per sync point; a second block
//     there is escalated. "Fast track pre-builds" is advice to the agents,
//     not a rule here.
package team
