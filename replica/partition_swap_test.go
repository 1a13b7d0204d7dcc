package replica

import (
	"errors"
	"testing"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// swapLog is a log whose read runs onRead first (to swap the partition's
// log under the read) and then answers data or err.
type swapLog struct {
	Log
	onRead func()
	data   []byte
	err    error
}

func (l *swapLog) ReadBytes(int64, int) ([]byte, error) {
	if l.onRead != nil {
		l.onRead()
	}
	return l.data, l.err
}
func (l *swapLog) StartOffset() int64 { return 0 }
func (l *swapLog) EndOffset() int64   { return 10 }

// Kafka: reads hold the partition's read lock, which the swap of a log
// for its future replica takes for writing, so a read never meets the
// old log closed. Varve's reads take no lock: a read that a swap closed
// the log under (segment answers ErrOffsetOutOfRange) runs again on the
// new log; a read whose log went offline answers its error.
func TestReadRetriesOnTheLogASwapInstalled(t *testing.T) {
	tp := segment.TopicPartition{Topic: "t", Partition: 0}
	closedErr := segment.ErrOffsetOutOfRange
	next := &swapLog{data: []byte("new")}
	old := &swapLog{err: closedErr}
	p := NewPartition(tp, TopicID{}, old, 10)
	old.onRead = func() { p.beginSwap(); p.setLog(next, 10) }
	got, err := p.ReadBytes(0, 100)
	if err != nil || string(got) != "new" {
		t.Fatalf("read across a swap: %q, %v; want the new log's data", got, err)
	}

	gone := &swapLog{err: closedErr}
	p = NewPartition(tp, TopicID{}, gone, 10)
	gone.onRead = func() { p.setLog(nil, 0) } // its log dir failed
	if _, err := p.ReadBytes(0, 100); !errors.Is(err, closedErr) {
		t.Fatalf("read of a log gone offline: %v; want its own error", err)
	}
	if _, err := p.ReadBytes(0, 100); !errors.Is(err, logdir.ErrOffline) {
		t.Fatalf("read while offline: %v; want ErrOffline", err)
	}
}
