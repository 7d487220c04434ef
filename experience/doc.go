// Package experience is kaizen's experience learning (seed 001): it turns
// agent conversations into three assets and hands them back before the
// next plan.
//
//   - Feedback signals: supervision found in a task's turns (reject,
//     correction, constraint, success, confusion, preference; from the user,
//     execution or the assistant's self-check), by a rule-based bilingual
//     extractor, a chat model, or the calling agent.
//   - Heuristics: transferable lessons (avoid, prefer, verify, clarify),
//     extracted from task experiences, deduplicated by embedding similarity,
//     with their own lifecycle candidate → active → refined → stale →
//     archived driven by support, evidence and recall feedback.
//   - Skills: SKILL.md documents (name, description, when to use, steps)
//     with versions and a draft → active → archived lifecycle.
//
// Recall scores heuristics by the seed's three factors
// (0.45·topic + 0.35·trigger signals + 0.20·quality weight), retrieves
// skills and captured memories by hybrid search (full text and vectors
// fused by reciprocal rank), filters to the configured limits and renders
// them, heuristics first, as evidence to weigh, never as instructions.
//
// Like package learning, this package is pure: no I/O, times are
// parameters. The engine (package kaizen) stores, embeds and calls models.
package experience
