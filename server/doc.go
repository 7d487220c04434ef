// Package server is kaizen's HTTP daemon: the REST API under /api/v1/ and
// /healthz over a [kaizen.Engine], with the security every surface shares
// (loopback by default, bearer token, cross-origin protection, body
// limits, security headers) and structured request logs.
//
// Every route, including the ones other surfaces add with [Server.Handle]
// (MCP at /mcp, the viewer at /, /metrics), passes through one entry point
// that applies that middleware; handlers are thin adapters over one engine
// method each. docs/api.md documents the routes.
package server
