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

// flushDeltasBatched adds the pending deltas of keys (sorted by project,
// then name) to their shards.
func (t *Tx) flushDeltasBatched(ctx context.Context, keys []rowKey) error {
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && keys[n].project == keys[0].project {
			n++
		}
		if err := t.flushProjectDeltas(ctx, keys[0].project, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

func (t *Tx) flushProjectDeltas(ctx context.Context, project string, keys []rowKey) error {
	names := make([]string, len(keys))
	starts := make([]int32, len(keys))
	for i, k := range keys {
		names[i], starts[i] = k.id, int32(rand.IntN(criterionShards))
	}
	type locked struct {
		name string
		r    shardRow
	}
	rows, err := many(ctx, t, "criterion shards", func(s scanner) (locked, error) {
		var l locked
		var r shardRow
		dest := []any{&l.name}
		// scanShard's columns after the name
		r, err := scanShard(prefixScanner{s, dest})
		l.r = r
		return l, err
	}, `SELECT c.name, s.shard, `+prefixed("s", shardCols)+`
		FROM unnest(CAST(? AS text[]), CAST(? AS int[])) WITH ORDINALITY AS c(name, start, ord)
		CROSS JOIN LATERAL (SELECT shard, `+shardCols+` FROM criterion_shards
			WHERE project = ? AND name = c.name COLLATE "C" AND shard >= c.start
			ORDER BY shard LIMIT 1 FOR UPDATE SKIP LOCKED) s
		ORDER BY c.ord`, names, starts, project)
	if err != nil {
		return fmt.Errorf("lock criterion shards: %w", err)
	}
	got := make(map[string]shardRow, len(rows))
	for _, l := range rows {
		got[l.name] = l.r
	}
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
	if len(args) == 0 {
		return nil
	}
	args = append(args, project)
	if _, err := t.exec(ctx, `UPDATE criterion_shards AS s SET helpful_sum = v.hs, helpful_ref = v.href,
		harmful_sum = v.xs, harmful_ref = v.xref, helpful_count = v.hc, harmful_count = v.xc, neutral_count = v.nc,
		last_validated = v.lv, updated_at = v.up, half_life_days = v.hl
		FROM (VALUES `+q.String()+`) AS v(name, shard, hs, href, xs, xref, hc, xc, nc, lv, up, hl)
		WHERE s.project = ? AND s.name = v.name AND s.shard = v.shard`, args...); err != nil {
		return fmt.Errorf("update criterion shards: %w", err)
	}
	return nil
}

// prefixScanner scans leading columns into dest, the rest with Scan's.
type prefixScanner struct {
	s    scanner
	dest []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.s.Scan(append(p.dest, dest...)...) }
