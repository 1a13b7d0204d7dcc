package segmenttest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/record"
)

// Batch builds an uncompressed batch of n records whose values are
// valueSize bytes derived from seed, with timestamp ts (0 means now).
func Batch(tb testing.TB, n, valueSize int, seed, ts int64) []byte {
	tb.Helper()
	out, err := MakeBatch(n, valueSize, seed, ts)
	if err != nil {
		tb.Fatalf("build batch: %v", err)
	}
	return out
}

// MakeBatch is Batch for callers without a testing.TB.
func MakeBatch(n, valueSize int, seed, ts int64) ([]byte, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	for i := 0; i < n; i++ {
		b.Append(record.Record{Key: Key(seed, i), Value: Value(seed, i, valueSize), Timestamp: ts})
	}
	return b.Build()
}

// Key is the key of record i of the batch made with seed.
func Key(seed int64, i int) []byte { return []byte(fmt.Sprintf("k-%d-%d", seed, i)) }

// Value fills size bytes from seed and i, so that every record differs.
func Value(seed int64, i, size int) []byte {
	v := make([]byte, size)
	x := uint64(seed)*0x9E3779B97F4A7C15 + uint64(i)
	for j := 0; j < size; j += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], x)
		copy(v[j:], w[:])
	}
	return v
}

// WithBase returns a copy of batch with its base offset set, as a log
// stores it.
func WithBase(batch []byte, base int64) []byte {
	c := append([]byte(nil), batch...)
	record.SetBaseOffset(c, base)
	return c
}

// Batches splits buf into its whole batches.
func Batches(tb testing.TB, buf []byte) [][]byte {
	tb.Helper()
	var out [][]byte
	for p := 0; p < len(buf); {
		_, n, err := record.NextBatch(buf[p:], len(buf)-p)
		if err != nil {
			break
		}
		out = append(out, buf[p:p+n])
		p += n
	}
	return out
}

// CopyDir copies the regular files of src into dst (created if needed):
// a crashed log's directory, copied so that each case of a test can
// damage and reopen its own.
func CopyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
