package cluster_test

import (
	"encoding/binary"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
)

// seedRequests are valid requests of several APIs, to start the fuzzer
// from bodies that decode.
func seedRequests() []kmsg.Request {
	topic := "fuzz"
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	meta.Topics = []kmsg.MetadataRequestTopic{mt}
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = 1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = make([]byte, 70)
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	produce.Topics = []kmsg.ProduceRequestTopic{pt}
	fetch := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
	create.Topics = []kmsg.CreateTopicsRequestTopic{ct}
	return []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), meta, produce, fetch, create,
		kmsg.NewPtrListOffsetsRequest(), kmsg.NewPtrDescribeConfigsRequest(), kmsg.NewPtrInitProducerIDRequest()}
}

var (
	fuzzOnce   sync.Once
	fuzzBroker *cluster.Broker
)

// FuzzServe feeds arbitrary request bodies, for every API key and
// version, to the broker: it must answer or close, never panic, and never
// answer twice.
func FuzzServe(f *testing.F) {
	for _, r := range seedRequests() {
		for v := int16(0); v <= r.MaxVersion(); v++ {
			r.SetVersion(v)
			f.Add(r.Key(), v, r.AppendTo(nil))
		}
	}
	f.Add(int16(999), int16(0), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		fuzzOnce.Do(func() {
			dir, err := os.MkdirTemp("", "varve-fuzz-")
			if err != nil {
				panic(err)
			}
			cfg, err := config.Parse(map[string]string{
				"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": "",
				"auto.create.topics.enable": "true",
			})
			if err != nil {
				panic(err)
			}
			fuzzBroker, err = cluster.New(cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				panic(err)
			}
		})
		req := &vnet.Request{Key: key, Version: version, CorrelationID: 1, Body: body, Received: time.Now()}
		if kr := kmsg.RequestForKey(key); kr != nil {
			kr.SetVersion(version)
			req.Flexible = kr.IsFlexible()
		}
		// Fetches with a max wait park for it; keep them short.
		if key == kmsg.Fetch.Int16() && len(body) >= 12 {
			binary.BigEndian.PutUint32(body[4:], 0)
		}
		done := make(chan struct{})
		var once sync.Once
		fuzzBroker.Serve(req, func(vnet.Response) {
			called := false
			once.Do(func() { called = true; close(done) })
			if !called {
				t.Error("respond called twice")
			}
		})
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no response to key %d v%d within 10 s", key, version)
		}
	})
}
