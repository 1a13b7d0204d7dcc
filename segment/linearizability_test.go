package segment_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// logOp is one operation on the log, as the linearizability checker
// sees it.
type logOp struct {
	kind   string // "append", "read", "end"
	id     int    // append: the batch's id
	offset int64  // read: the offset asked for
}

// linearLog is the sequential specification: the log is the list of
// batch ids appended, one record (one offset) each; the state is that
// list rendered as a string, so states compare with ==.
var linearLog = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(logOp), output.(int64)
		n := int64(len(s) / 4)
		switch in.kind {
		case "append": // output: the offset given
			return out == n, s + fmt.Sprintf("%04d", in.id)
		case "read": // output: the id read at the offset, or -1 for none
			if in.offset < n {
				id, _ := strconv.Atoi(s[in.offset*4 : in.offset*4+4])
				return out == int64(id), s
			}
			return out == -1, s
		default: // "end": output: the log end offset
			return out == n, s
		}
	},
	DescribeOperation: func(input, output any) string {
		in := input.(logOp)
		return fmt.Sprintf("%s(%d,%d) -> %d", in.kind, in.id, in.offset, output.(int64))
	},
}

// Appends, reads and end-offset queries from concurrent goroutines,
// across rolls, must be linearizable against a sequential log: every
// acknowledged append is visible to every read that starts after it,
// offsets are dense and never reused, and no read sees a batch that its
// append had not begun.
func TestLogIsLinearizable(t *testing.T) {
	for round := 0; round < 5; round++ {
		cfg := segment.DefaultConfig()
		cfg.SegmentBytes = 1024
		cfg.FS = noSyncFS()
		l := open(t, t.TempDir(), cfg)
		var mu sync.Mutex
		var history []porcupine.Operation
		observe := func(client int, in logOp, call time.Time, out int64) {
			mu.Lock()
			history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call.UnixNano(), Output: out, Return: time.Now().UnixNano()})
			mu.Unlock()
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					id := w*100 + i
					b := record.NewBatchBuilder(record.CompressionNone)
					b.Append(record.Record{Value: []byte(strconv.Itoa(id))})
					batch, _ := b.Build()
					call := time.Now()
					info, err := l.Append(batch)
					if err != nil {
						errs <- err
						return
					}
					observe(w, logOp{kind: "append", id: id}, call, info.FirstOffset)
				}
			}()
		}
		for r := 0; r < 3; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 40; i++ {
					if i%5 == 0 {
						call := time.Now()
						observe(10+r, logOp{kind: "end"}, call, l.EndOffset())
						continue
					}
					off := rand.Int64N(80)
					call := time.Now()
					id, err := readID(l, off)
					if err != nil {
						errs <- err
						return
					}
					observe(10+r, logOp{kind: "read", offset: off}, call, id)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		l.Close()
		res, _ := porcupine.CheckOperationsVerbose(linearLog, history, 30*time.Second)
		if res != porcupine.Ok {
			t.Fatalf("round %d: history of %d operations is %s", round, len(history), res)
		}
	}
}

// readID reads the batch at offset and returns the id in its record, or
// -1 when the offset is at or past the end.
func readID(l *segment.Log, off int64) (int64, error) {
	buf, err := l.ReadBytes(off, 1)
	if errors.Is(err, segment.ErrOffsetOutOfRange) || err == nil && len(buf) == 0 {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	for rec, err := range record.Records(buf) {
		if err != nil {
			return 0, err
		}
		if rec.Offset != off {
			return 0, fmt.Errorf("read at %d returned offset %d first", off, rec.Offset)
		}
		id, err := strconv.Atoi(string(rec.Value))
		return int64(id), err
	}
	return -1, nil
}
