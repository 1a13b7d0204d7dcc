package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

type recordingMarkers struct{ sent []MarkerRequest }

func (r *recordingMarkers) Send(m MarkerRequest) { r.sent = append(r.sent, m) }

func newTestCoordinator(t *testing.T) (*Coordinator, *MemoryLog, *recordingMarkers) {
	t.Helper()
	next := int64(100)
	ids := func() (int64, error) { next++; return next - 1, nil }
	log, mk := &MemoryLog{}, &recordingMarkers{}
	c := New(0, Config{}, log, ids, mk)
	c.BeginLoad(1)
	c.FinishLoad(time.UnixMilli(0))
	return c, log, mk
}

// Kafka: TransactionMetadata.isEpochExhausted and
// prepareProducerIdRotation. An epoch at Short.MaxValue - 1 is not
// bumped again: InitProducerId hands out a new producer id at epoch 0,
// and the client that named the exhausted id, retrying, is not fenced.
func TestEpochExhaustedRotatesProducerID(t *testing.T) {
	c, _, _ := newTestCoordinator(t)
	now := time.UnixMilli(0)
	r := c.InitProducerID(now, "t", 1000, -1, -1)
	if r.Code != 0 || r.ProducerID != 100 {
		t.Fatalf("first InitProducerId: %+v", r)
	}
	c.txns["t"].epoch = maxEpoch - 1
	if r = c.InitProducerID(now, "t", 1000, 100, maxEpoch-1); r.Code != 0 || r.ProducerID != 100 || r.Epoch != maxEpoch {
		t.Fatalf("bump to the last epoch: %+v", r)
	}
	r = c.InitProducerID(now, "t", 1000, 100, maxEpoch)
	if r.Code != 0 || r.ProducerID != 101 || r.Epoch != 0 {
		t.Fatalf("rotation: %+v, want pid 101 epoch 0", r)
	}
	if r = c.InitProducerID(now, "t", 1000, 100, maxEpoch); r.Code != 0 || r.ProducerID != 101 || r.Epoch != 0 {
		t.Fatalf("retry after the rotation: %+v, want pid 101 epoch 0 again", r)
	}
	if r = c.InitProducerID(now, "t", 1000, 100, 5); r.Code != kerr.ProducerFenced.Code {
		t.Fatalf("old id, old epoch: %+v, want PRODUCER_FENCED", r)
	}
}

// Kafka: TransactionState.validPreviousStates. A write that would take
// a state where Kafka forbids is refused and changes nothing.
func TestForbiddenTransitionRefused(t *testing.T) {
	c, log, _ := newTestCoordinator(t)
	c.InitProducerID(time.UnixMilli(0), "t", 1000, -1, -1)
	before := len(log.Bytes())
	next := c.txns["t"].clone()
	next.state = CompleteCommit // from Empty
	if code := c.write(next); code != kerr.UnknownServerError.Code {
		t.Fatalf("write Empty -> CompleteCommit: code %d", code)
	}
	if c.txns["t"].state != Empty || len(log.Bytes()) != before {
		t.Fatalf("state %s, log grew by %d bytes", c.txns["t"].state, len(log.Bytes())-before)
	}
}

// Every state Kafka names has a transition table entry and its own name.
func TestStateNames(t *testing.T) {
	for s := Empty; s <= PrepareEpochFence; s++ {
		if got, ok := ParseState(s.String()); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, ok)
		}
		if _, ok := previous[s]; !ok {
			t.Errorf("%s has no previous states", s)
		}
	}
	if _, ok := ParseState("Bogus"); ok {
		t.Error("ParseState accepted Bogus")
	}
}

// A coordinator that is loading answers COORDINATOR_LOAD_IN_PROGRESS,
// and Load rejects a torn batch with an error instead of guessing.
func TestLoadingAndTornBatch(t *testing.T) {
	c, log, _ := newTestCoordinator(t)
	c.InitProducerID(time.UnixMilli(0), "t", 1000, -1, -1)
	buf := log.Bytes()
	c.BeginLoad(2)
	if r := c.InitProducerID(time.UnixMilli(0), "t", 1000, -1, -1); r.Code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("while loading: %+v", r)
	}
	if _, code := c.List(time.UnixMilli(0), ListFilter{}); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("List while loading: code %d", code)
	}
	if _, err := c.Load(buf[:len(buf)-1]); err == nil {
		t.Fatal("Load accepted a torn batch")
	}
}
