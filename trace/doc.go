// Package trace holds the pure algorithms of kaizen's failure-learning
// system (seed 003): execution traces with every attempt, artifact execution
// history, failure patterns per skill, and the three reviews — immediate
// self-verification, the task-end review that learns from chains that failed,
// were retried and then succeeded, and the scheduled review with its report.
//
// The pieces, in the order a service wires them:
//
//   - Data (types.go): ExecutionTrace, Attempt, ExecutionRecord and
//     FailurePattern with every field of the seed plus what matching and
//     explaining need; Validate returns *ValidationError wrapping a sentinel.
//     History (history.go): ContextHash, SuccessRateByContext with Wilson
//     intervals, FailingContexts, RecordsFromTrace.
//   - Skills from commands (command.go): ParseCommand reduces a shell line to
//     a stable command family ("go test", "pytest", "npm run build"); a
//     command family is the skill when no kaizen skill is named.
//   - Error grouping (ecosystem.go, normalize.go, drain.go, grouping.go):
//     Fingerprint detects the error type per ecosystem, its key message and
//     the first frame in the project's own code, masks volatile tokens and
//     hashes; Grouper groups online (strict hash, mined-template hash, loose
//     hash, then similarity), keeps several hashes per group and a grouping
//     version, and saves its state as JSON.
//   - Trace assembly (assemble.go, hint.go): Feed turns the ordered events
//     of an agent session into traces, one event at a time, over a plain
//     AssemblerState the caller persists between hook calls.
//   - Pre-execution check (precheck.go): PatternIndex.Check warns about a
//     matching failure pattern with its fix, rate-limited per session;
//     LearnFromWarnedAttempt adjusts the pattern's warning weight.
//   - Reviews: Verify (verify.go, bounded corrections), ReviewTask
//     (review.go: failure patterns, skill verdicts, heuristic proposals for
//     the experience system), ReviewPeriod and RenderMarkdown (scheduled.go,
//     report.go: trends per skill, artifact and methodology, frequent
//     patterns, suggestions).
//
// Nothing here performs I/O or reads a clock: time-dependent functions take
// `now` or event times as input, results are deterministic, and every
// decision is returned as data for a service layer to persist. Thresholds
// live in Config (config.go) with the seed's defaults where it has them.
package trace
