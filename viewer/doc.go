// Package viewer is kaizen's web viewer: server-rendered HTML pages over a
// [kaizen.Engine], mounted on the daemon's [server.Server] at "/".
//
// It shows what the learning system holds for a project — an overview
// with a success-rate chart, patterns with their maturity and the
// explanation of their state, anti-patterns, criterion weights with a
// decay chart, outcomes, errors grouped by task, and exploration sessions
// with their budget use and phase timeline — and lets a person
// promote, deprecate or reset a pattern and resolve an error. Pages are
// html/template (every value agents wrote is escaped), charts are SVG
// rendered on the server, interactions use the vendored htmx, and a
// server-sent-events stream (/events) tells open pages when the project
// changes.
//
// Every response carries a strict Content-Security-Policy (no inline
// script or style), state-changing requests pass the server's
// cross-origin protection, and when the server has a token a browser logs
// in at /login to get a session cookie. docs/viewer.md describes the pages
// and routes.
package viewer
