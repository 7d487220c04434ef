package teamsvc_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// BenchmarkClaim: 100 concurrent claimers (two per member of 50) take
// b.N tasks; reports claims/s and the p99 latency of one claim.
func BenchmarkClaim(b *testing.B) {
	for _, backend := range testkit.Backends {
		b.Run(backend, func(b *testing.B) {
			var members []team.Member
			for i := range 50 {
				members = append(members, team.Member{Name: fmt.Sprintf("w%d", i), Role: team.RoleWorker, Worker: team.Worker{Kind: team.WorkerAgent}})
			}
			bb := testkit.Open(b, backend)
			ctx := b.Context()
			if _, err := bb.E.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: members}); err != nil {
				b.Fatal(err)
			}
			for done := 0; done < b.N; done += 1000 {
				var in []kaizen.TeamTaskInput
				for i := done; i < min(done+1000, b.N); i++ {
					in = append(in, kaizen.TeamTaskInput{ID: fmt.Sprintf("t%07d", i), Subject: "work"})
				}
				if _, err := bb.E.AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: in}); err != nil {
					b.Fatal(err)
				}
			}
			var mu sync.Mutex
			var lat []time.Duration
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i := range 100 {
				wg.Go(func() {
					for {
						t0 := time.Now()
						res, err := bb.E.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: fmt.Sprintf("w%d", i%50)})
						if err != nil {
							b.Error(err)
							return
						}
						if res.Task == nil {
							return
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/el.Seconds(), "claims/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// BenchmarkDeliveryLatency: a receiver long-polls its inbox; the time from
// Send's call to the receiver holding the message.
func BenchmarkDeliveryLatency(b *testing.B) {
	bb := testkit.Open(b, "sqlite")
	ctx := b.Context()
	if _, err := bb.E.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: defaultMembers()}); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		got := make(chan time.Time, 1)
		ready := make(chan struct{})
		go func() {
			close(ready)
			res, err := bb.E.Inbox(ctx, kaizen.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 60})
			if err != nil || len(res.Items) == 0 {
				b.Error(err)
			}
			got <- time.Now()
			bb.E.AckMessages(ctx, kaizen.AckInput{Team: "alpha", Member: "ann", Seqs: []int64{res.Items[0].Message.Seq}})
		}()
		<-ready
		time.Sleep(time.Millisecond) // let the receiver start waiting
		t0 := time.Now()
		if _, err := bb.E.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
