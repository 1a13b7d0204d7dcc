package coordlog

import (
	"errors"
	"testing"

	"github.com/varve/varve/record"
)

func batch(t *testing.T, n int) []byte {
	t.Helper()
	b := record.NewBatchBuilder(record.CompressionNone)
	for range n {
		b.Append(record.Record{Value: []byte("v")})
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Bytes gives each batch the base offset a partition would: dense from
// 0, after the records of the batches before it; a failed append keeps
// nothing.
func TestMemoryLogOffsets(t *testing.T) {
	var l MemoryLog
	if err := l.Append(batch(t, 2)); err != nil {
		t.Fatal(err)
	}
	l.Fail = errors.New("disk gone")
	if err := l.Append(batch(t, 1)); err == nil {
		t.Fatal("append with Fail set succeeded")
	}
	l.Fail = nil
	if err := l.Append(batch(t, 3)); err != nil {
		t.Fatal(err)
	}
	buf := l.Bytes()
	var bases []int64
	for pos := 0; pos < len(buf); {
		h, n, err := record.NextBatch(buf[pos:], len(buf)-pos)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, h.BaseOffset)
		pos += n
	}
	if l.Len() != 2 || len(bases) != 2 || bases[0] != 0 || bases[1] != 2 {
		t.Fatalf("len %d, base offsets %v; want 2 batches at 0 and 2", l.Len(), bases)
	}
}
