package cluster

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/fetchsession"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// BenchmarkReplicaFetchRequestBytes measures the bytes of a follower's
// Fetch request per round with 1,000 followed partitions (10 topics of
// 100), a given number of which moved on since the last round, encoded
// as the follower fetchers encode them: full fetches against an
// incremental session (KIP-227). It reports req-bytes/round; the ratio
// of the two is the figure.
func BenchmarkReplicaFetchRequestBytes(b *testing.B) {
	for _, moved := range []int{0, 10, 100} {
		for _, mode := range []string{"full", "incremental"} {
			b.Run(fmt.Sprintf("moved=%d/%s", moved, mode), func(b *testing.B) {
				var h fetchsession.Handler
				offsets := make([]int64, 1000)
				total := 0
				for round := 0; round < b.N; round++ {
					for i := 0; i < moved; i++ {
						offsets[(round*moved+i)%len(offsets)]++
					}
					rf := replicaRound(&h, offsets, mode == "incremental")
					req, _ := replicaFetchRequest(rf)
					n := len(kmsg.NewRequestFormatter(kmsg.FormatterClientID("varve-replica-fetcher")).AppendRequest(nil, req, 1))
					total += n
					if mode == "incremental" {
						h.HandleResponse(0, 77)
					}
				}
				b.SetBytes(int64(total / b.N))
				b.ReportMetric(float64(total)/float64(b.N), "req-bytes/round")
			})
		}
	}
}

// replicaRound builds one round's ReplicaFetch as replica.fetcher does.
func replicaRound(h *fetchsession.Handler, offsets []int64, incremental bool) replica.ReplicaFetch {
	want := make([]fetchsession.Partition, len(offsets))
	for i, off := range offsets {
		id := [16]byte{byte(i / 100), 1}
		want[i] = fetchsession.Partition{Key: fetchsession.Key{TopicID: id, Topic: fmt.Sprintf("topic-%d", i/100), Partition: int32(i % 100)},
			Params: fetchsession.Params{FetchOffset: off, LogStartOffset: 0, MaxBytes: 1 << 20, CurrentLeaderEpoch: 3, LastFetchedEpoch: 3}}
	}
	rf := replica.ReplicaFetch{ReplicaID: 2, ReplicaEpoch: 9, MaxWait: 500e6, MinBytes: 1, MaxBytes: 10 << 20, SessionEpoch: -1}
	sent := want
	if incremental {
		built := h.Build(want)
		rf.SessionID, rf.SessionEpoch, sent = built.SessionID, built.Epoch, built.Partitions
	}
	for _, sp := range sent {
		rf.Partitions = append(rf.Partitions, replica.ReplicaFetchPartition{TP: segment.TopicPartition{Topic: sp.Topic, Partition: sp.Partition},
			TopicID: sp.TopicID, FetchOffset: sp.FetchOffset, LogStartOffset: sp.LogStartOffset, MaxBytes: sp.MaxBytes,
			CurrentLeaderEpoch: sp.CurrentLeaderEpoch, LastFetchedEpoch: sp.LastFetchedEpoch})
	}
	return rf
}
