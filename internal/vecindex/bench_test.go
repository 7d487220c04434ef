package vecindex

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// benchData caches the clustered data sets of the benchmarks by size.
var benchData = struct {
	sync.Mutex
	m map[int]*dataset
}{m: map[int]*dataset{}}

func benchSet(n int) *dataset {
	benchData.Lock()
	defer benchData.Unlock()
	if d, ok := benchData.m[n]; ok {
		return d
	}
	d := clusteredData(21, n, 200, 512)
	benchData.m[n] = d
	return d
}

// BenchmarkSearch measures k=10 queries at dim 512 on clustered data, in
// exhaustive mode and as an IVF, and reports latency percentiles, memory
// and recall@10 against exact float search.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, mode := range []string{"exact", "ivf"} {
			opts := Options{ExactBelow: 1 << 30}
			if mode == "ivf" {
				opts = Options{ExactBelow: min(DefaultExactBelow, n/2)}
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				d := benchSet(n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				ix, err := d.index(opts)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				ix.Train()
				train := time.Since(t0)
				runtime.GC()
				runtime.ReadMemStats(&after)
				lat := make([]time.Duration, 0, 1<<16)
				b.ResetTimer()
				i := 0
				for b.Loop() {
					s := time.Now()
					if _, err := ix.Search(d.queries[i%len(d.queries)], 10); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(s))
					i++
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(ix.Bytes())/float64(n), "Bytes/vec")
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heap-B/vec")
				b.ReportMetric(float64(train.Milliseconds()), "train-ms")
				q := &dataset{dim: d.dim, ids: d.ids, vecs: d.vecs, queries: d.queries[:50]}
				r, err := q.recallAt(ix, 10, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r, "recall@10")
			})
		}
	}
}

// BenchmarkAdd measures inserting into an index of 10,000 vectors of dim
// 512, exhaustive (one list) and as an IVF of 100 lists.
func BenchmarkAdd(b *testing.B) {
	d := benchSet(10000)
	for _, mode := range []string{"exact", "ivf"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options{ExactBelow: 1 << 30}
			if mode == "ivf" {
				opts = Options{}
			}
			ix, _ := d.index(opts)
			ix.Train()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				// Replace the existing ids in turn: the size stays fixed.
				if err := ix.Add("v"+strconv.Itoa(i%len(d.vecs)), d.queries[i%len(d.queries)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkDotCodes(b *testing.B) {
	a := make([]byte, 512)
	c := make([]byte, 512)
	for i := range a {
		a[i], c[i] = byte(i*7), byte(i*13)
	}
	ys := make([]uint64, 256)
	prepare(ys, a)
	var sink int32
	for b.Loop() {
		sink += dotCodes(ys, c)
	}
	_ = sink
}
