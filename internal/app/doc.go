// Package app holds what every subsystem service shares: the environment a
// service runs in ([Env]: the store, the clock, the logger, the default
// project), the engine's error type ([Error], rendered alike by every
// surface), input validation and paging.
//
// Each subsystem has one service package beside this one
// (internal/app/learningsvc, experiencesvc, exploresvc, …) holding its
// transactions and orchestration; the pure algorithms live in the
// top-level packages (learning, experience, explore, …) and the facade in
// the root package kaizen delegates to the services in one line per action.
//
// # The redaction boundary
//
// Untrusted text (agents' prompts and messages, tool input, output and
// failures, error messages and stack traces, task descriptions, notes,
// captured turns, extracted memories and heuristics, explore records,
// trace spans, team messages, imported records) passes through [Scrub] once,
// in the service that receives it, before it is validated into a record,
// stored, logged, exported or injected into a prompt. Every surface (REST,
// MCP, CLI, hooks, import) reaches the same service method, so the scrub
// cannot be skipped by choosing a surface. A new service that takes such
// text calls [Scrub] (or [ScrubAll], [ScrubFields], [ScrubJSON]) on it first,
// and a service that renders stored text into a prompt scrubs it on the
// way out too (records written before the boundary existed).
//
// Scrub replaces each secret with a marker naming the rule that found it,
// [REDACTED:rule] (package internal/redact holds the rules). Redaction is
// idempotent: scrubbing scrubbed text changes nothing, so a record that
// travels export → import, or is scrubbed on the way in and again on the
// way out, is stable.
package app
