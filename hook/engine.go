package hook

import (
	"time"

	"github.com/kaizenhq/kaizen"
)

// EngineHandler is the handler of hook events over an engine, the same in
// the daemon, in a hook without daemon and in the CLI's ingestion: task
// events, the experience system's capture and recall, the exploration
// advisor, failure learning's traces and pre-execution check, the
// closing of ended and idle sessions, and the delivery of team messages.
func EngineHandler(e *kaizen.Engine, idle time.Duration) Handler {
	return Handler{Backend: e, Experience: e, Advisors: []Advisor{ExploreAdvisor{Backend: e}}, Closer: e, IdleTimeout: idle,
		Traces: e, PreTool: []Advisor{TraceAdvisor{Backend: e}}, Team: e}
}
