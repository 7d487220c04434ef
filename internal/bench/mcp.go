package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPResult is the outcome of an MCP load run.
type MCPResult struct {
	Clients   int                  `json:"clients"`
	Seconds   float64              `json:"seconds"`
	Calls     int64                `json:"calls"`
	Errors    int64                `json:"errors"`
	Recorded  int64                `json:"outcomes_recorded"`
	PerTool   map[string]Latencies `json:"per_tool"`
	FirstErr  string               `json:"first_error,omitempty"`
	PerSecond float64              `json:"calls_per_second"`
}

// MCP runs clients concurrent MCP clients over streamable HTTP against
// endpoint for d: each alternates record_outcome (2 of 8 patterns) and
// plan_guidance in project. Recorded counts the record_outcome calls that
// succeeded, to compare with the outcomes stored.
func MCP(ctx context.Context, endpoint, project string, clients int, d time.Duration) (MCPResult, error) {
	patterns := []string{"Split by feature", "Respect dependency chain", "Handle shared types first",
		"Tests alongside implementation", "Split by component", "Separate API routes", "Split by layer", "Tests in separate subtask"}
	var (
		mu       sync.Mutex
		times    = map[string][]time.Duration{}
		calls    atomic.Int64
		errs     atomic.Int64
		recorded atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	start := time.Now()
	deadline := start.Add(d)
	for c := range clients {
		wg.Go(func() {
			tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}
			client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "kaizen-bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				fail(fmt.Errorf("connect: %w", err))
				return
			}
			defer cs.Close()
			rng := rand.New(rand.NewPCG(uint64(c), 9))
			local := map[string][]time.Duration{}
			call := func(tool string, args map[string]any) bool {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args})
				calls.Add(1)
				switch {
				case err != nil:
					fail(fmt.Errorf("%s: %w", tool, err))
					return false
				case res.IsError:
					fail(fmt.Errorf("%s: tool error: %v", tool, res.Content))
					return false
				}
				local[tool] = append(local[tool], time.Since(t0))
				return true
			}
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				args := map[string]any{"project": project, "bead_id": fmt.Sprintf("mcp-%d-%d", c, i),
					"duration_ms": 60_000 + rng.IntN(2_000_000), "error_count": rng.IntN(4), "retry_count": rng.IntN(3),
					"success":  rng.Float64() < 0.75,
					"patterns": []string{patterns[rng.IntN(len(patterns))], patterns[rng.IntN(len(patterns))]}}
				if call("record_outcome", args) {
					recorded.Add(1)
				}
				call("plan_guidance", map[string]any{"project": project, "task": "split by feature, then separate API routes"})
			}
			mu.Lock()
			for k, v := range local {
				times[k] = append(times[k], v...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res := MCPResult{Clients: clients, Seconds: time.Since(start).Seconds(), Calls: calls.Load(), Errors: errs.Load(),
		Recorded: recorded.Load(), PerTool: map[string]Latencies{}}
	for k, v := range times {
		res.PerTool[k] = Summarise(v)
	}
	res.PerSecond = float64(res.Calls) / res.Seconds
	if s, ok := firstErr.Load().(string); ok {
		res.FirstErr = s
	}
	return res, nil
}
