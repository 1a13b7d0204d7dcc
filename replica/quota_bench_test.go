package replica_test

import (
	"testing"

	"github.com/varve/varve/replica"
)

// BenchmarkReplicationQuota is what a fetch pays per partition for the
// replication quotas: the lookup of an unthrottled partition (every
// partition when no throttle is set), and for a throttled one the
// lookup, the check against the bound and the record of its bytes.
func BenchmarkReplicationQuota(b *testing.B) {
	q := replica.NewReplicationQuota(replica.QuotaConfig{})
	for i := range 100 {
		q.MarkThrottled("topic-"+string(rune('a'+i%26))+string(rune('a'+i/26)), false, []int32{0, 1, 2})
	}
	q.MarkThrottled("hot", true, nil)
	q.SetBound(1 << 40)
	free, hot := tp("cold", 0), tp("hot", 3)
	b.Run("unthrottled", func(b *testing.B) {
		for range b.N {
			if q.IsThrottled(free) {
				b.Fatal("throttled")
			}
		}
	})
	b.Run("throttled", func(b *testing.B) {
		for range b.N {
			if q.IsThrottled(hot) && !q.Exceeded() {
				q.Record(1 << 20)
			}
		}
	})
}
