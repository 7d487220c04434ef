// Package trace holds the pure algorithms of kaizen's failure-learning
// system (seed 003): execution traces with every attempt, artifact execution
// history, failure patterns per skill, and the three reviews — immediate
// self-verification, the task-end review that learns from chains that failed,
// were retried and then succeeded, and the scheduled review with its report.
//
// The package also turns what a coding agent does into that data:
//
//   - ParseCommand reduces a shell command to a stable command family
//     ("go test", "pytest", "npm run build"), the unit a skill is learned for
//     when no kaizen skill is named (rules in command.go).
//   - Fingerprint and Grouper turn error output into stable signatures: the
//     error type per ecosystem, a masked key message, the first frame in the
//     project's own code, an online template miner (Drain-like), several
//     hashes per group and a grouping version (grouping.go, drain.go).
//   - Assembler builds traces from the ordered events of an agent session,
//     one event at a time, with its state a plain JSON-serialisable value.
//   - Check warns before an attempt that matches a known failure pattern,
//     rate-limited per session, and learns from whether the warning helped.
//
// Nothing here performs I/O or reads a clock: every time-dependent function
// takes `now` (or event times) as input, results are deterministic, and every
// decision is returned as data for a service layer to persist.
package trace
