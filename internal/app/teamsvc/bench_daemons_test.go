package teamsvc_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/team"
)

// Benchmarks of issue 15's measures that need two daemons or a real
// clock (docs/BENCHMARKS.md, "Team engine: two daemons, wake-ups, dead
// workers"):
//
//	KAIZEN_TEST_POSTGRES=… go test -run '^$' -bench 'TwoEngines|AcrossDaemons|DeadWorker' -benchtime 20x ./internal/app/teamsvc/

func percentile(lat []time.Duration, p int) float64 {
	slices.Sort(lat)
	return float64(lat[(len(lat)-1)*p/100].Microseconds()) / 1000
}

// BenchmarkClaimTwoEnginesPostgres: two engines (two daemons' worth of
// connection pools) on one PostgreSQL schema, 100 concurrent claimers
// (50 per engine) take b.N tasks; every task must be claimed once.
func BenchmarkClaimTwoEnginesPostgres(b *testing.B) {
	dsn := testkit.DSN(b, "postgres")
	var members []team.Member
	for i := range 50 {
		members = append(members, team.Member{Name: fmt.Sprintf("w%d", i), Role: team.RoleWorker, Worker: team.Worker{Kind: team.WorkerAgent}})
	}
	engines := []*kaizen.Engine{}
	for range 2 {
		engines = append(engines, testkit.Open(b, "postgres", func(c *kaizen.Config) { c.DB = dsn }).E)
	}
	ctx := b.Context()
	if _, err := engines[0].CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: members}); err != nil {
		b.Fatal(err)
	}
	for done := 0; done < b.N; done += 1000 {
		var in []kaizen.TeamTaskInput
		for i := done; i < min(done+1000, b.N); i++ {
			in = append(in, kaizen.TeamTaskInput{ID: fmt.Sprintf("t%07d", i), Subject: "work"})
		}
		if _, err := engines[1].AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: in}); err != nil {
			b.Fatal(err)
		}
	}
	var mu sync.Mutex
	var lat []time.Duration
	counts := map[string]int{}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 100 {
		e := engines[i%2]
		wg.Go(func() {
			for {
				t0 := time.Now()
				res, err := e.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: fmt.Sprintf("w%d", i/2)})
				if err != nil {
					b.Error(err)
					return
				}
				if res.Task == nil {
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				counts[res.Task.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if len(counts) != b.N {
		b.Fatalf("%d tasks claimed, want %d", len(counts), b.N)
	}
	for id, c := range counts {
		if c != 1 {
			b.Fatalf("task %s claimed %d times", id, c)
		}
	}
	b.ReportMetric(float64(len(lat))/el.Seconds(), "claims/s")
	b.ReportMetric(percentile(lat, 99), "p99-ms")
}

// BenchmarkDeliveryLatencyPostgres: a receiver long-polls its inbox and
// is asleep (its wait started) when the message is sent; the time from
// Send's call to the receiver holding the message, the sender on the same
// daemon (in-process signal) or on another one (LISTEN/NOTIFY).
func BenchmarkDeliveryLatencyPostgres(b *testing.B) {
	for _, across := range []bool{false, true} {
		name := "same-daemon"
		if across {
			name = "across-daemons"
		}
		b.Run(name, func(b *testing.B) {
			dsn := pgtest.DSN(b)
			open := func() *teamsvc.Service {
				st, err := postgres.Open(b.Context(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				s := teamsvc.New(app.NewEnv(st, nil, nil, "proj"))
				b.Cleanup(s.Close)
				return s
			}
			recv, send := open(), (*teamsvc.Service)(nil)
			send = recv
			if across {
				send = open()
			}
			ctx := b.Context()
			if _, err := send.CreateTeam(ctx, teamsvc.TeamInput{Name: "alpha", Members: defaultMembers()}); err != nil {
				b.Fatal(err)
			}
			sleeping := make(chan struct{}, 1)
			teamsvc.SetBeforeSleep(recv, func() {
				select {
				case sleeping <- struct{}{}:
				default:
				}
			})
			var lat []time.Duration
			for b.Loop() {
				got := make(chan time.Time, 1)
				go func() {
					res, err := recv.Inbox(ctx, teamsvc.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 60})
					if err != nil || len(res.Items) == 0 {
						b.Error("no message", err)
						got <- time.Now()
						return
					}
					got <- time.Now()
					_, _ = recv.Ack(ctx, teamsvc.AckInput{Team: "alpha", Member: "ann", Seqs: []int64{res.Items[0].Message.Seq}})
				}()
				<-sleeping
				t0 := time.Now()
				if _, err := send.Send(ctx, teamsvc.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note"}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, (<-got).Sub(t0))
			}
			b.ReportMetric(percentile(lat, 50), "p50-ms")
			b.ReportMetric(percentile(lat, 99), "p99-ms")
		})
	}
}

// BenchmarkDeadWorkerReclaim: a worker claims a task with a 1 s lease and
// dies (no heartbeat, no report); another claimer is already waiting. On
// the real clock, the time from the lease's end to the waiting claimer
// holding the task (its attempt counted) — the time from a worker's death
// to its task being claimable again is the lease left plus this.
func BenchmarkDeadWorkerReclaim(b *testing.B) {
	for _, backend := range testkit.Backends {
		b.Run(backend, func(b *testing.B) {
			bb := testkit.Open(b, backend, func(c *kaizen.Config) { c.Now = nil })
			ctx := b.Context()
			if _, err := bb.E.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: defaultMembers(),
				Settings: kaizen.TeamSettings{LeaseSeconds: 1, MaxAttempts: 0}}); err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprintf("t%05d", i)
				if _, err := bb.E.AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{{ID: id, Subject: "work"}}}); err != nil {
					b.Fatal(err)
				}
				dead, err := bb.E.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: "bob"})
				if err != nil || dead.Task == nil || dead.Task.ID != id {
					b.Fatalf("dead worker's claim: %v %+v", err, dead)
				}
				res, err := bb.E.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: "ann", WaitSeconds: 10})
				got := time.Now()
				if err != nil || res.Task == nil || res.Task.ID != id || res.Task.Attempts != 2 {
					b.Fatalf("reclaim: %v %+v", err, res)
				}
				lat = append(lat, got.Sub(dead.ExpiresAt))
				if _, err := bb.E.ReportTask(ctx, kaizen.ReportInput{Team: "alpha", Task: id, Member: "ann", Epoch: res.Epoch,
					Status: team.StatusCompleted}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(percentile(lat, 50), "after-lease-p50-ms")
			b.ReportMetric(percentile(lat, 99), "after-lease-p99-ms")
		})
	}
}
