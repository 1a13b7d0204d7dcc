package main

import (
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// retryCounter is a franz-go logger that keeps nothing but a count of
// the client's CONCURRENT_TRANSACTIONS back-offs: a broker answers
// AddPartitionsToTxn, EndTxn or a transactional produce with that error
// while the previous transaction's markers are still being written, and
// franz-go then sleeps (ConcurrentTransactionsBackoff, 20 ms by default)
// and retries. The count says how much of a round's time is that sleep.
type retryCounter struct {
	backoffs atomic.Int64
}

func (c *retryCounter) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (c *retryCounter) Log(_ kgo.LogLevel, msg string, _ ...any) {
	if strings.Contains(msg, "failed with CONCURRENT_TRANSACTIONS") {
		c.backoffs.Add(1)
	}
}
