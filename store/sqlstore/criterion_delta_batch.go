package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Pending criterion deltas in two statements per project (PostgreSQL,
// issue 17). flushDeltas locked a free shard and wrote it per criterion:
// two round trips each, eight for the four criteria every outcome of a
// project judges. Here one statement locks a free shard of every pending
// criterion of the project (a LATERAL subquery per criterion, each FOR
// UPDATE SKIP LOCKED from a random shard on, as lockShard does), and one
// multi-row UPDATE writes them. A criterion for which no free shard was
// found that way (none at or after its start, or no shards yet) goes
// through addDelta, the one-criterion path, which has every fallback.

// deltaKeys returns the keys of the pending deltas, by project and name.
func (t *Tx) deltaKeys() []rowKey {
	var keys []rowKey
	for k := range t.agg.rows {
		if k.table == "criterion_delta" {
			keys = append(keys, k)
		}
	}
	slicesSortKeys(keys)
	return keys
}

func slicesSortKeys(keys []rowKey) {
	for i := 1; i < len(keys); i++ { // few keys: insertion sort
		for j := i; j > 0 && keyLess(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

func keyLess(a, b rowKey) bool {
	if a.project != b.project {
		return a.project < b.project
	}
	return a.id < b.id
}

// flushDeltasBatched adds the pending deltas of keys (sorted by project,
// then name) to their shards.
func (t *Tx) flushDeltasBatched(ctx context.Context, keys []rowKey) error {
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && keys[n].project == keys[0].project {
			n++
		}
		st, finish := t.shardLocks(keys[0].project, keys[:n])
		if err := t.pipeline(ctx, "lock criterion shards", []Pipelined{st}); err != nil {
			return err
		}
		if err := finish(ctx); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// shardLocks returns the statement locking a free shard of each criterion
// of keys (one project), and the func that, once it ran, writes the
// deltas to the shards found (one multi-row UPDATE), adds the others the
// one-criterion way, and forgets the deltas.
func (t *Tx) shardLocks(project string, keys []rowKey) (Pipelined, func(context.Context) error) {
	names := make([]string, len(keys))
	starts := make([]int32, len(keys))
	for i, k := range keys {
		names[i], starts[i] = k.id, int32(rand.IntN(criterionShards))
	}
	got := make(map[string]shardRow, len(keys))
	st := Pipelined{SQL: `SELECT c.name, s.shard, ` + prefixed("s", shardCols) + `
		FROM unnest(CAST(? AS text[]), CAST(? AS int[])) WITH ORDINALITY AS c(name, start, ord)
		CROSS JOIN LATERAL (SELECT shard, ` + shardCols + ` FROM criterion_shards
			WHERE project = ? AND name = c.name COLLATE "C" AND shard >= c.start
			ORDER BY shard LIMIT 1 FOR UPDATE SKIP LOCKED) s
		ORDER BY c.ord`, Args: []any{names, starts, project}, Row: func(s scanner) error {
		var name string
		r, err := scanShard(prefixScanner{s, []any{&name}})
		got[name] = r
		return err
	}}
	return st, func(ctx context.Context) error {
		var q strings.Builder
		var args []any
		for _, k := range keys {
			d := t.agg.rows[k].value.(criterionDelta)
			r, ok := got[k.id]
			if !ok {
				if err := t.addDelta(ctx, d); err != nil {
					return err
				}
				continue
			}
			s := fold(r.c, []shardRow{d.row()})
			if len(args) > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`(CAST(? AS text) COLLATE "C", CAST(? AS smallint), CAST(? AS double precision), CAST(? AS bigint),
			CAST(? AS double precision), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint),
			CAST(? AS bigint), CAST(? AS bigint), CAST(? AS double precision))`)
			args = append(args, k.id, r.shard, s.Helpful.Value, micros(s.Helpful.Ref), s.Harmful.Value, micros(s.Harmful.Ref),
				s.HelpfulCount, s.HarmfulCount, s.NeutralCount, micros(s.LastValidated), micros(s.UpdatedAt), d.halfLife)
		}
		if len(args) > 0 {
			args = append(args, project)
			if _, err := t.exec(ctx, `UPDATE criterion_shards AS s SET helpful_sum = v.hs, helpful_ref = v.href,
		harmful_sum = v.xs, harmful_ref = v.xref, helpful_count = v.hc, harmful_count = v.xc, neutral_count = v.nc,
		last_validated = v.lv, updated_at = v.up, half_life_days = v.hl
		FROM (VALUES `+q.String()+`) AS v(name, shard, hs, href, xs, xref, hc, xc, nc, lv, up, hl)
		WHERE s.project = ? AND s.name = v.name AND s.shard = v.shard`, args...); err != nil {
				return fmt.Errorf("update criterion shards: %w", err)
			}
		}
		for _, k := range keys {
			t.forget(k)
			// the criterion read before now lacks what was just written
			t.forgetClean(criterionKey(k.project, k.id))
		}
		return nil
	}
}

// prefixScanner scans leading columns into dest, the rest with Scan's.
type prefixScanner struct {
	s    scanner
	dest []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.s.Scan(append(p.dest, dest...)...) }
