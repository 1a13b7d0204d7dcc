package chaos

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka: a non-retriable error code means the broker refused the write;
// a timeout, a broken connection or a retriable code the client gave up
// on leaves it indeterminate (Jepsen's "info" outcome).
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Outcome
	}{
		{nil, OK},
		{kerr.MessageTooLarge, Failed},
		{fmt.Errorf("produce: %w", kerr.InvalidRecord), Failed},
		{kerr.NotLeaderForPartition, Unknown},
		{kerr.RequestTimedOut, Unknown},
		{kgo.ErrRecordTimeout, Unknown},
		{context.DeadlineExceeded, Unknown},
		{fmt.Errorf("read tcp: connection reset by peer"), Unknown},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Appends recorded from many goroutines keep their ids and outcomes.
func TestHistoryRecordsConcurrently(t *testing.T) {
	h := NewHistory()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				id := h.Invoke(fmt.Sprint(g), 0, fmt.Sprintf("%d-%d", g, i))
				h.Complete(id, int64(id), nil)
				h.AddPoll(Poll{Consumer: fmt.Sprint(g)})
			}
		}()
	}
	wg.Wait()
	as := h.Appends()
	if len(as) != 800 || len(h.Polls()) != 800 {
		t.Fatalf("%d appends, %d polls", len(as), len(h.Polls()))
	}
	for i, a := range as {
		if a.ID != i || a.Outcome != OK || a.Offset != int64(i) || a.Complete < a.Invoke {
			t.Fatalf("append %d: %v", i, a)
		}
	}
}
