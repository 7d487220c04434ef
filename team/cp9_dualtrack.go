package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// SyncPoint is one checkpoint of CP-9. The seed's trackA_deliverable and
// trackB_deliverable spellings are accepted as aliases.
type SyncPoint struct {
	ID                string `json:"id"`
	Name              string `json:"name,omitempty"`
	TrackADeliverable string `json:"track_a_deliverable"`
	TrackBDeliverable string `json:"track_b_deliverable"`
	AlignmentCheck    string `json:"alignment_check"`
}

// UnmarshalJSON accepts the seed's camelCase aliases and refuses unknown fields.
func (s *SyncPoint) UnmarshalJSON(b []byte) error {
	b, err := renameAliases("sync_point", b, map[string]string{"trackA_deliverable": "track_a_deliverable", "trackB_deliverable": "track_b_deliverable"})
	if err != nil {
		return err
	}
	type plain SyncPoint
	var p plain
	if err := decodeInput("sync point", b, &p); err != nil {
		return err
	}
	*s = SyncPoint(p)
	return nil
}

// DualTrackInput starts a CP-9 Dual-Track run.
type DualTrackInput struct {
	Requirement string      `json:"requirement"`
	SyncPoints  []SyncPoint `json:"sync_points"`
	TrackA      Role        `json:"track_a,omitempty"` // default track-a
	TrackB      Role        `json:"track_b,omitempty"` // default track-b
	Aligner     Role        `json:"aligner,omitempty"` // checks alignment; default coordinator
	// SwarmParticipants join the CP-7 swarm when a track is blocked.
	SwarmParticipants []string `json:"swarm_participants,omitempty"`
}

// CP-9 states.
const (
	p9Tracks   = "TRACKS"
	p9Align    = "ALIGN"
	p9Adjust   = "ADJUST"
	p9Swarm    = "SWARM"
	p9Fallback = "FALLBACK"
)

type dualTrack struct {
	In       DualTrackInput `json:"in"`
	Idx      int            `json:"idx"`
	N        int            `json:"n"` // task generation
	AKey     string         `json:"a_key"`
	BKey     string         `json:"b_key"`
	ADone    bool           `json:"a_done"`
	BDone    bool           `json:"b_done"`
	Attempts int            `json:"attempts"` // alignment attempts at this sync point
	AlignKey string         `json:"align_key,omitempty"`
	Adjust   []string       `json:"adjust,omitempty"` // open adjustment task keys
	Swarmed  bool           `json:"swarmed,omitempty"`
	Blocked  string         `json:"blocked,omitempty"` // "A" or "B"
	Aligned  []string       `json:"aligned,omitempty"`
	// PreA and PreB: a task the fast track started early on the next sync
	// point's deliverable while waiting for the slow one (the seed's
	// "fast track pre-builds the next phase").
	PreA string `json:"pre_a,omitempty"`
	PreB string `json:"pre_b,omitempty"`
}

func (p *dualTrack) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-9"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if len(p.In.SyncPoints) == 0 {
		return invalid(op, "sync_points", "at least one sync point required")
	}
	seen := map[string]bool{}
	for i, sp := range p.In.SyncPoints {
		if sp.ID == "" || seen[sp.ID] || sp.TrackADeliverable == "" || sp.TrackBDeliverable == "" {
			return invalid(op, fmt.Sprintf("sync_points[%d]", i), "unique id and both deliverables required")
		}
		seen[sp.ID] = true
	}
	p.In.TrackA = orRole(p.In.TrackA, RoleTrackA)
	p.In.TrackB = orRole(p.In.TrackB, RoleTrackB)
	p.In.Aligner = orRole(p.In.Aligner, RoleCoordinator)
	c.r.MaxIterations = len(p.In.SyncPoints) * c.r.Config.DualTrack.MaxAlignAttempts
	p.launch(c, "both tracks start towards "+p.In.SyncPoints[0].ID)
	return nil
}

func (p *dualTrack) sp() SyncPoint { return p.In.SyncPoints[p.Idx] }

func (p *dualTrack) launch(c *ctx, reason string) {
	sp := p.sp()
	// A pre-built task of this sync point is taken over, done or not; a
	// failed or cancelled one is replaced.
	var took [2]bool
	for i, pre := range []struct {
		key  *string
		cur  *string
		done *bool
	}{{&p.PreA, &p.AKey, &p.ADone}, {&p.PreB, &p.BKey, &p.BDone}} {
		if *pre.key == "" || *pre.done {
			continue
		}
		if t, ok := c.r.Tasks[*pre.key]; ok && (t.Status == StatusCompleted || !t.Status.Terminal()) {
			*pre.cur, *pre.done, took[i] = *pre.key, t.Status == StatusCompleted, true
			c.note("pre-built " + *pre.key + " taken over for " + sp.ID)
		}
		*pre.key = ""
	}
	// A track's task still open (paused for a swarm on the other) is kept.
	open := func(key string) bool { t, ok := c.r.Tasks[key]; return ok && !t.Status.Terminal() }
	took[0] = took[0] || open(p.AKey)
	took[1] = took[1] || open(p.BKey)
	if !p.ADone && !took[0] {
		p.N++
		p.AKey = fmt.Sprintf("a-%s-%d", sp.ID, p.N)
		c.task(p.AKey, TaskSpec{Subject: "TRACK-A-" + sp.ID + ": " + clip(sp.TrackADeliverable, 120), Description: sp.TrackADeliverable, Role: p.In.TrackA})
	}
	if !p.BDone && !took[1] {
		p.N++
		p.BKey = fmt.Sprintf("b-%s-%d", sp.ID, p.N)
		c.task(p.BKey, TaskSpec{Subject: "TRACK-B-" + sp.ID + ": " + clip(sp.TrackBDeliverable, 120), Description: sp.TrackBDeliverable, Role: p.In.TrackB})
	}
	c.to(p9Tracks, reason)
}

// preBuild starts the fast track on the next sync point's deliverable and
// tells the slow track to speed up (the seed's fallback for a large gap
// between the tracks).
func (p *dualTrack) preBuild(c *ctx, fast string) {
	if p.Idx+1 >= len(p.In.SyncPoints) {
		return
	}
	next := p.In.SyncPoints[p.Idx+1]
	role, slow, deliverable := p.In.TrackA, p.In.TrackB, next.TrackADeliverable
	pre := &p.PreA
	if fast == "B" {
		role, slow, deliverable, pre = p.In.TrackB, p.In.TrackA, next.TrackBDeliverable, &p.PreB
	}
	if *pre != "" {
		return
	}
	p.N++
	*pre = fmt.Sprintf("p%s-%s-%d", strings.ToLower(fast), next.ID, p.N)
	c.task(*pre, TaskSpec{Subject: "TRACK-" + fast + "-" + next.ID + " (pre-build): " + clip(deliverable, 100), Description: deliverable + "\n\nPre-built while the other track finishes " + p.sp().ID + "; the alignment at " + p.sp().ID + " may still ask for changes.", Role: role})
	c.send(RoleAddress(slow), MsgProgress, "track "+fast+" reached "+p.sp().ID+": speed up", &ProgressReport{Phase: p.sp().ID, KeyInfo: "the other track is waiting at " + p.sp().ID + " and pre-builds " + next.ID})
}

func (p *dualTrack) handle(c *ctx, s signal) error {
	cfg := c.r.Config.DualTrack
	switch c.r.State {
	case p9Tracks:
		switch {
		case s.kind == sigTimer && s.key == "sync":
			c.r.Errors++
			late := "A"
			if p.ADone {
				late = "B"
			}
			return p.trackBlocked(c, late, fmt.Sprintf("track %s did not reach %s within the sync wait", late, p.sp().ID))
		case s.kind == sigTask && (s.key == p.AKey || s.key == p.BKey):
			track := "A"
			if s.key == p.BKey {
				track = "B"
			}
			switch s.status {
			case StatusCompleted:
				if track == "A" {
					p.ADone = true
				} else {
					p.BDone = true
				}
				if p.ADone && p.BDone {
					c.cancelTimer("sync")
					p.align(c, "both tracks reached "+p.sp().ID)
					return nil
				}
				c.setTimer("sync", cfg.SyncWait)
				c.note("track " + track + " reached " + p.sp().ID + " first: wait for the other")
				p.preBuild(c, track)
			case StatusFailed, StatusBlocked, StatusCancelled:
				c.cancelTimer("sync")
				return p.trackBlocked(c, track, "track "+track+" "+string(s.status)+": "+s.errText)
			}
		}
	case p9Swarm:
		if s.kind == sigChild {
			other := p.BKey
			if p.Blocked == "B" {
				other = p.AKey
			}
			if t, ok := c.r.Tasks[other]; ok && !t.Status.Terminal() {
				c.emit(Command{Kind: CmdResumeTask, Key: other, Reason: "swarm ended"})
			}
			if s.child.Status == OutcomeSuccess || s.child.Status == OutcomeDegraded {
				if p.Blocked == "A" {
					p.ADone = false
				} else {
					p.BDone = false
				}
				p.launch(c, "swarm solved the blocked track: it restarts")
				return nil
			}
			c.finish(s.child.Status, "blocked track not solved by the swarm: "+s.child.Summary, p.data())
		}
	case p9Align:
		if s.key != p.AlignKey && !(s.key == "" && s.typ == MsgSyncCheckpoint) {
			return nil
		}
		var cp *SyncCheckpoint
		switch {
		case s.typ == MsgSyncCheckpoint:
			cp = s.payload.(*SyncCheckpoint)
			if s.key == "" && cp.SyncID != p.sp().ID {
				return nil
			}
		case s.kind == sigTask && s.status == StatusCompleted:
			cp = &SyncCheckpoint{SyncID: p.sp().ID, Status: Aligned}
		case s.kind == sigTask && (s.status == StatusFailed || s.status == StatusCancelled):
			cp = &SyncCheckpoint{SyncID: p.sp().ID, Status: Misaligned, Conflicts: []string{"alignment check " + string(s.status)}}
		default:
			return nil
		}
		c.r.Tasks[p.AlignKey] = withStatus(c.r.Tasks[p.AlignKey], StatusCompleted)
		c.send(AddressAll, MsgSyncCheckpoint, p.sp().ID+" "+string(cp.Status), cp)
		if cp.Status == Aligned {
			p.Aligned = append(p.Aligned, p.sp().ID)
			if p.Idx+1 == len(p.In.SyncPoints) {
				c.finish(OutcomeSuccess, "every sync point aligned", p.data())
				return nil
			}
			p.Idx++
			p.ADone, p.BDone, p.Attempts, p.Swarmed = false, false, 0, false
			p.launch(c, "aligned: both tracks continue to "+p.sp().ID)
			return nil
		}
		if p.Attempts >= cfg.MaxAlignAttempts {
			var rest []string
			for _, sp := range p.In.SyncPoints[p.Idx:] {
				rest = append(rest, sp.TrackADeliverable+", then "+sp.TrackBDeliverable)
			}
			req := cmp.Or(p.In.Requirement, "dual-track work") + " — sequentially: " + strings.Join(rest, "; ")
			if err := c.startChild("fallback", CP1, PipelineInput{Requirement: req}, "alignment failed"); err != nil {
				return err
			}
			c.to(p9Fallback, fmt.Sprintf("%s misaligned %d times: degrade to CP-1", p.sp().ID, p.Attempts))
			return nil
		}
		c.r.Retries++
		adj := cmp.Or(cp.Adjust, "both")
		p.Adjust = nil
		for _, tr := range []string{"A", "B"} {
			if adj != "both" && adj != tr {
				continue
			}
			key := fmt.Sprintf("adjust-%s-%s-%d", strings.ToLower(tr), p.sp().ID, p.Attempts)
			role := p.In.TrackA
			if tr == "B" {
				role = p.In.TrackB
			}
			c.task(key, TaskSpec{Subject: fmt.Sprintf("TRACK-%s-%s-fix-%d", tr, p.sp().ID, p.Attempts), Description: "Re-align with the other track: " + strings.Join(cp.Conflicts, "; "), Role: role})
			p.Adjust = append(p.Adjust, key)
		}
		c.to(p9Adjust, "misaligned: track(s) "+adj+" adjust")
	case p9Adjust:
		if s.kind != sigTask {
			return nil
		}
		for i, k := range p.Adjust {
			if k != s.key {
				continue
			}
			switch s.status {
			case StatusCompleted:
				p.Adjust = append(p.Adjust[:i], p.Adjust[i+1:]...)
				if len(p.Adjust) == 0 {
					p.align(c, "adjustments done: check alignment again")
				}
			case StatusFailed, StatusCancelled:
				p.Adjust = append(p.Adjust[:i], p.Adjust[i+1:]...)
				for _, k := range p.Adjust {
					c.cancelTask(k, "alignment re-checked early")
				}
				p.Adjust = nil
				p.align(c, "an adjustment "+string(s.status)+": check alignment again")
			}
			return nil
		}
	case p9Fallback:
		if s.kind == sigChild {
			st := s.child.Status
			if st == OutcomeSuccess {
				st = OutcomeDegraded
			}
			c.finish(st, "degraded to CP-1: "+s.child.Summary, p.data())
		}
	}
	return nil
}

func (p *dualTrack) align(c *ctx, reason string) {
	p.Attempts++
	c.r.Iteration++
	sp := p.sp()
	p.AlignKey = fmt.Sprintf("align-%s-%d", sp.ID, p.Attempts)
	c.task(p.AlignKey, TaskSpec{Subject: sp.ID + ": alignment check", Description: cmp.Or(sp.AlignmentCheck, "both tracks agree"), Role: p.In.Aligner, Expect: MsgSyncCheckpoint})
	c.to(p9Align, reason)
}

// trackBlocked pauses the other track and starts a CP-7 swarm, once per sync
// point; a second block at the same point is escalated.
func (p *dualTrack) trackBlocked(c *ctx, track, why string) error {
	if p.Swarmed {
		c.finish(OutcomeEscalated, why+"; blocked again after a swarm at "+p.sp().ID, p.data())
		return nil
	}
	p.Swarmed = true
	p.Blocked = track
	other, blocked := p.BKey, p.AKey
	if track == "B" {
		other, blocked = p.AKey, p.BKey
	}
	if t, ok := c.r.Tasks[other]; ok && !t.Status.Terminal() {
		c.emit(Command{Kind: CmdPauseTask, Key: other, Reason: "the other track is blocked"})
	}
	c.cancelTask(blocked, "track blocked: swarm")
	if err := c.startChild("swarm-"+p.sp().ID, CP7, SwarmInput{Issue: why, Participants: p.In.SwarmParticipants}, "track blocked"); err != nil {
		return err
	}
	c.to(p9Swarm, why+": pause the other track, swarm (CP-7)")
	return nil
}

func (p *dualTrack) data() map[string]any {
	return map[string]any{"aligned": p.Aligned, "sync_points": len(p.In.SyncPoints)}
}
