package team

import "math"

// Limits are a team's spending limits; zero means unlimited.
type Limits struct {
	ConcurrentCommandWorkers int     `json:"concurrent_command_workers"`
	RunsPerHour              int     `json:"runs_per_hour"`
	Tokens                   int64   `json:"tokens"`
	Cost                     float64 `json:"cost"`
}

// Usage is what a team has used against its limits (runs in the last hour,
// tokens and cost in the budget period).
type Usage struct {
	CommandWorkers int     `json:"command_workers"`
	RunsLastHour   int     `json:"runs_last_hour"`
	Tokens         int64   `json:"tokens"`
	Cost           float64 `json:"cost"`
}

// Request is what an action is about to use.
type Request struct {
	CommandWorkers int     `json:"command_workers"`
	Runs           int     `json:"runs"`
	Tokens         int64   `json:"tokens"`
	Cost           float64 `json:"cost"`
}

// CheckLimits refuses a request that would exceed a limit with a
// *LimitError naming it. Negative or NaN amounts are a *ValidationError.
func CheckLimits(l Limits, u Usage, r Request) error {
	if r.CommandWorkers < 0 || r.Runs < 0 || r.Tokens < 0 || r.Cost < 0 || math.IsNaN(r.Cost) || math.IsNaN(u.Cost) {
		return invalid("check limits", "request", "amounts must be non-negative numbers")
	}
	check := func(name string, limit, used, want float64) error {
		if limit > 0 && want > 0 && used+want > limit {
			return &LimitError{Limit: name, Used: used, Want: want, Max: limit}
		}
		return nil
	}
	for _, c := range []struct {
		name              string
		limit, used, want float64
	}{
		{"concurrent_command_workers", float64(l.ConcurrentCommandWorkers), float64(u.CommandWorkers), float64(r.CommandWorkers)},
		{"runs_per_hour", float64(l.RunsPerHour), float64(u.RunsLastHour), float64(r.Runs)},
		{"tokens", float64(l.Tokens), float64(u.Tokens), float64(r.Tokens)},
		{"cost", l.Cost, u.Cost, r.Cost},
	} {
		if err := check(c.name, c.limit, c.used, c.want); err != nil {
			return err
		}
	}
	return nil
}
