package vecindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
)

// A snapshot read back gives the same search results as the index it was
// written from, exhaustive and inverted-file search alike: the quantizer
// and the lists are saved, so nothing is retrained.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, n := range []int{0, 300, 5000} {
		d := clusteredData(7, n, 20, 100) // dimension 100: codes are padded to 112
		ix, err := d.index(Options{})
		if err != nil {
			t.Fatal(err)
		}
		ix.Remove("missing")
		if n > 0 {
			ix.Remove(d.ids[0]) // a hole filled by the last vector
		}
		ix.Train()
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), Options{})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if back.Len() != ix.Len() || back.Dim() != ix.Dim() {
			t.Fatalf("n=%d: read %d vectors of dimension %d, wrote %d of %d", n, back.Len(), back.Dim(), ix.Len(), ix.Dim())
		}
		if (back.q == nil) != (ix.q == nil) || back.trainedN != ix.trainedN {
			t.Fatalf("n=%d: the quantizer did not survive the round trip", n)
		}
		for _, q := range d.queries {
			want, err := ix.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			got, err := back.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d: search differs after a round trip:\n got %v\nwant %v", n, got, want)
			}
		}
	}
}

func TestSnapshotDefects(t *testing.T) {
	d := clusteredData(3, 50, 1, 16)
	ix, err := d.index(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXXX"), good[5:]...),
		"truncated": good[:len(good)-10],
		"flipped":   flip(good, len(good)/2),
		"checksum":  flip(good, len(good)-1),
		"trailing":  append(slices.Clone(good), 0),
	}
	for name, data := range cases {
		if _, err := Read(bytes.NewReader(data), Options{}); !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: %v, want ErrSnapshot", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	out := slices.Clone(b)
	out[i] ^= 0x40
	return out
}

// FuzzRead: any input is read without a panic, and what reads is a valid
// index whose snapshot reads back to the same index.
func FuzzRead(f *testing.F) {
	for _, n := range []int{0, 1, 40} {
		d := clusteredData(1, n, 0, 8)
		ix, err := d.index(Options{})
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), false)
		f.Add(buf.Bytes(), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, sealed bool) {
		if sealed && len(data) >= 4 {
			// Give the input a valid checksum, so that the parser sees it.
			body := data[:len(data)-4]
			data = binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
		}
		ix, err := Read(bytes.NewReader(data), Options{})
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not wrap ErrSnapshot", err)
			}
			return
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := Read(bytes.NewReader(buf.Bytes()), Options{})
		if err != nil {
			t.Fatalf("a written snapshot does not read: %v", err)
		}
		var buf2 bytes.Buffer
		if _, err := again.WriteTo(&buf2); err != nil {
			t.Fatal(err)
		}
		if again.Len() != ix.Len() || !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
			t.Fatalf("a snapshot does not survive a round trip")
		}
		if ix.Len() > 0 {
			if _, err := ix.Search(make([]float32, ix.Dim()), 1); err == nil {
				t.Fatal("zero query accepted")
			}
		}
	})
}
