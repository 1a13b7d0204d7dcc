package replica

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/record"
)

// The replication scripts under testdata/replication drive a partition's
// replicas on several brokers step by step: elections decided by the
// test (the controller's part), appends, one fetch round of a follower,
// ISR checks on a clock the script sets, AlterPartition answers, crashes
// that lose an unsynced tail. Each command prints what changed. Rewrite
// the expected output with -rewrite after a deliberate change.
func TestReplicationScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/replication", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// node is one broker's replica of the partition.
type node struct {
	id  int32
	log *memLog
	r   *Replication
}

type harness struct {
	cfg   ReplicationConfig
	nodes map[int32]*node
	next  int // records appended so far, for unique values
	now   int64
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	if d.HasArg("now") {
		d.ScanArgs(&testing.T{}, "now", &h.now)
	}
	switch d.Cmd {
	case "new":
		return h.new(d)
	case "elect":
		return h.elect(d)
	case "append":
		return h.append(d)
	case "fetch":
		return h.fetch(d)
	case "tick":
		n := h.node(d)
		n.r.Tick(h.now)
		return h.proposal(n), nil
	case "alter":
		return h.alter(d)
	case "produce-status":
		return h.produceStatus(d)
	case "consumer-fetch":
		return h.consumerFetch(d)
	case "crash":
		return h.crash(d)
	case "truncate-to-hw":
		n := h.node(d) // the rule before KIP-101: a new follower cut its log at its high watermark
		n.log.TruncateTo(n.r.HighWatermark())
		n.r = NewReplication(n.r.cfg, n.log, n.r.EpochCache(), n.r.HighWatermark())
		return h.describe(n), nil
	case "offsets-for-epoch":
		return h.offsetsForEpoch(d)
	case "state":
		return h.state(d), nil
	case "committed":
		return h.committed(), nil
	}
	return "", fmt.Errorf("unknown command %s", d.Cmd)
}

func (h *harness) new(d *datadriven.TestData) (string, error) {
	h.cfg = ReplicationConfig{MinInsyncReplicas: 1, ReplicaLagTimeMaxMs: 30000}
	if d.HasArg("min-isr") {
		d.ScanArgs(&testing.T{}, "min-isr", &h.cfg.MinInsyncReplicas)
	}
	if d.HasArg("lag") {
		d.ScanArgs(&testing.T{}, "lag", &h.cfg.ReplicaLagTimeMaxMs)
	}
	h.nodes = map[int32]*node{}
	for _, id := range ids(d, "nodes") {
		cfg := h.cfg
		cfg.LocalID = id
		l := &memLog{}
		h.nodes[id] = &node{id: id, log: l, r: NewReplication(cfg, l, nil, 0)}
	}
	return h.state(d), nil
}

// elect makes leader the leader of epoch and every other live node its
// follower, as the controller's decision would reach them.
func (h *harness) elect(d *datadriven.TestData) (string, error) {
	var leader, epoch, pe int32
	d.ScanArgs(&testing.T{}, "leader", &leader)
	d.ScanArgs(&testing.T{}, "epoch", &epoch)
	if d.HasArg("partition-epoch") {
		d.ScanArgs(&testing.T{}, "partition-epoch", &pe)
	}
	s := LeaderAndISR{Leader: leader, LeaderEpoch: epoch, PartitionEpoch: pe, Replicas: h.ids()}
	if d.HasArg("replicas") {
		s.Replicas = ids(d, "replicas")
	}
	s.ISR = s.Replicas
	if d.HasArg("isr") {
		s.ISR = ids(d, "isr")
	}
	skip := ids(d, "down")
	for _, id := range h.ids() {
		if !slices.Contains(s.Replicas, id) {
			skip = append(skip, id) // not assigned the partition: told nothing
		}
	}
	var b strings.Builder
	for _, id := range h.ids() {
		n := h.nodes[id]
		if slices.Contains(skip, id) {
			continue
		}
		var err error
		if id == leader {
			err = n.r.BecomeLeader(s, h.now)
		} else {
			err = n.r.BecomeFollower(s)
		}
		if err != nil {
			fmt.Fprintf(&b, "node %d: %v\n", id, err)
			continue
		}
		b.WriteString(h.describe(n))
	}
	return b.String(), nil
}

func (h *harness) append(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	count, acks := 1, int16(-1)
	if d.HasArg("count") {
		d.ScanArgs(&testing.T{}, "count", &count)
	}
	if d.HasArg("acks") {
		var a string
		d.ScanArgs(&testing.T{}, "acks", &a)
		if a != "all" {
			v, _ := strconv.Atoi(a)
			acks = int16(v)
		}
	}
	b := record.NewBatchBuilder(record.CompressionNone)
	for range count {
		h.next++
		b.Append(record.Record{Value: []byte("v" + strconv.Itoa(h.next))})
	}
	batch, err := b.Build()
	if err != nil {
		return "", err
	}
	before := n.log.EndOffset()
	last, err := n.r.AppendAsLeader(batch, acks, h.now)
	if err != nil {
		return fmt.Sprintf("node %d: append refused: %s\n", n.id, errName(err)), nil
	}
	return fmt.Sprintf("node %d: appended %d-%d\n%s", n.id, before, last, h.describe(n)), nil
}

// fetch runs one fetch round of a follower against its leader.
func (h *harness) fetch(d *datadriven.TestData) (string, error) {
	f := h.node(d)
	req, ok := f.r.NextFetch(h.now)
	if !ok {
		return fmt.Sprintf("node %d is not a follower\n", f.id), nil
	}
	l := h.nodes[f.r.Leader()]
	var b strings.Builder
	fmt.Fprintf(&b, "node %d -> %d: fetch offset=%d last-epoch=%d epoch=%d\n", f.id, l.id, req.FetchOffset, req.LastFetchedEpoch, req.CurrentLeaderEpoch)
	dec := l.r.Fetch(req)
	resp := FetchResponse{Err: dec.Err, HighWatermark: dec.HighWatermark, LogStartOffset: dec.LogStartOffset, Diverging: dec.Diverging}
	switch {
	case dec.Err != nil:
		fmt.Fprintf(&b, "node %d: %s\n", l.id, errName(dec.Err))
	case dec.Diverging != nil:
		fmt.Fprintf(&b, "node %d: diverging epoch=%d end=%d\n", l.id, dec.Diverging.Epoch, dec.Diverging.EndOffset)
	default:
		resp.Records = l.log.read(req.FetchOffset, dec.ReadUpTo)
		fmt.Fprintf(&b, "node %d: records %s hw=%d\n", l.id, (&memLog{batches: splitBatches(resp.Records)}).String(), dec.HighWatermark)
		if d.HasArg("max-bytes") {
			// The leader's read stops at the byte limit, mid-batch.
			var limit int
			d.ScanArgs(&testing.T{}, "max-bytes", &limit)
			if limit < len(resp.Records) {
				resp.Records = resp.Records[:limit]
				fmt.Fprintf(&b, "(cut at byte %d)\n", limit)
			}
		}
	}
	switch {
	case d.HasArg("drop-response"):
		b.WriteString("(the answer is lost)\n")
	default:
		if err := f.r.HandleFetchResponse(resp); err != nil {
			fmt.Fprintf(&b, "node %d: %s\n", f.id, errName(err))
		}
	}
	b.WriteString(h.describe(f))
	b.WriteString(h.describe(l))
	return b.String() + h.proposal(l), nil
}

// proposal prints (and hands out) an AlterPartition the node proposed.
func (h *harness) proposal(n *node) string {
	a, ok := n.r.TakeAlterPartition()
	if !ok {
		return ""
	}
	return fmt.Sprintf("node %d: AlterPartition leader-epoch=%d partition-epoch=%d isr=%v\n", n.id, a.LeaderEpoch, a.PartitionEpoch, a.ISR)
}

// alter answers the AlterPartition in flight as the controller would:
// accepted (the partition epoch bumps) or with the named error.
func (h *harness) alter(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	h.proposal(n)
	in := n.r.inflight
	if in == nil {
		return "nothing in flight\n", nil
	}
	if d.HasArg("error") {
		var name string
		d.ScanArgs(&testing.T{}, "error", &name)
		n.r.HandleAlterPartitionResponse(LeaderAndISR{}, errByName(name), h.now)
		return h.describe(n) + h.proposal(n), nil
	}
	s := LeaderAndISR{Leader: n.id, LeaderEpoch: in.LeaderEpoch, PartitionEpoch: in.PartitionEpoch + 1, ISR: in.ISR, Replicas: n.r.replicas}
	n.r.HandleAlterPartitionResponse(s, nil, h.now)
	return h.describe(n), nil
}

func (h *harness) produceStatus(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	var off int64
	d.ScanArgs(&testing.T{}, "offset", &off)
	done, err := n.r.ProduceStatus(off)
	switch {
	case !done:
		return "waiting\n", nil
	case err != nil:
		return "done: " + errName(err) + "\n", nil
	}
	return "done: acknowledged\n", nil
}

func (h *harness) consumerFetch(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	req := FetchRequest{ReplicaID: -1, LastFetchedEpoch: -1, CurrentLeaderEpoch: -1, NowMs: h.now}
	d.ScanArgs(&testing.T{}, "offset", &req.FetchOffset)
	if d.HasArg("epoch") {
		d.ScanArgs(&testing.T{}, "epoch", &req.CurrentLeaderEpoch)
	}
	dec := n.r.Fetch(req)
	if dec.Err != nil {
		return errName(dec.Err) + "\n", nil
	}
	return fmt.Sprintf("records %v (read up to %d)\n", n.log.values(dec.ReadUpTo)[min(int(req.FetchOffset), len(n.log.values(dec.ReadUpTo))):], dec.ReadUpTo), nil
}

// crash restarts a node that lost everything past keep (its unflushed
// tail), with the high watermark and epoch cache of its last checkpoint.
func (h *harness) crash(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	keep := n.log.EndOffset()
	if d.HasArg("keep") {
		d.ScanArgs(&testing.T{}, "keep", &keep)
	}
	n.log.TruncateTo(keep)
	epochs := &EpochCache{entries: n.r.EpochCache().Entries()}
	n.r = NewReplication(n.r.cfg, n.log, epochs, n.r.HighWatermark())
	return h.describe(n), nil
}

func (h *harness) offsetsForEpoch(d *datadriven.TestData) (string, error) {
	n := h.node(d)
	var e int32
	d.ScanArgs(&testing.T{}, "epoch", &e)
	cur := int32(-1)
	if d.HasArg("current") {
		d.ScanArgs(&testing.T{}, "current", &cur)
	}
	ee, err := n.r.OffsetForLeaderEpoch(cur, e)
	if err != nil {
		return errName(err) + "\n", nil
	}
	return fmt.Sprintf("epoch=%d end=%d\n", ee.Epoch, ee.EndOffset), nil
}

// committed prints, per node, the records below its high watermark, and
// whether every node agrees on the offsets they both hold there.
func (h *harness) committed() string {
	var b strings.Builder
	byOffset := map[string]string{}
	agree := true
	for _, id := range h.ids() {
		n := h.nodes[id]
		vals := n.log.values(n.r.HighWatermark())
		fmt.Fprintf(&b, "node %d: %v\n", id, vals)
		for _, v := range vals {
			off, val, _ := strings.Cut(v, ":")
			if prev, ok := byOffset[off]; ok && prev != val {
				agree = false
			}
			byOffset[off] = val
		}
	}
	fmt.Fprintf(&b, "committed records agree: %v\n", agree)
	return b.String()
}

func (h *harness) state(d *datadriven.TestData) string {
	if d.HasArg("node") {
		return h.describe(h.node(d))
	}
	var b strings.Builder
	for _, id := range h.ids() {
		b.WriteString(h.describe(h.nodes[id]))
	}
	return b.String()
}

func (h *harness) describe(n *node) string {
	r := n.r
	var e []string
	for _, x := range r.EpochCache().Entries() {
		e = append(e, fmt.Sprintf("%d:%d", x.Epoch, x.StartOffset))
	}
	s := fmt.Sprintf("node %d: %s epoch=%d hw=%d log=%s epochs=[%s]", n.id, r.Role(), r.LeaderEpoch(), r.HighWatermark(), n.log, strings.Join(e, " "))
	if r.Role() == RoleLeader {
		s += fmt.Sprintf(" isr=%v", r.ISR())
		if !r.HighWatermarkKnown() {
			s += " (hw below epoch start: ListOffsets latest is OFFSET_NOT_AVAILABLE)"
		}
		if r.inflight != nil {
			s += fmt.Sprintf(" maximal=%v", r.MaximalISR())
		}
	}
	return s + "\n"
}

func (h *harness) node(d *datadriven.TestData) *node {
	var id int32
	d.ScanArgs(&testing.T{}, "node", &id)
	n := h.nodes[id]
	if n == nil {
		d.Fatalf(&testing.T{}, "no node %d", id)
	}
	return n
}

func (h *harness) ids() []int32 { return slices.Sorted(maps.Keys(h.nodes)) }

func ids(d *datadriven.TestData, key string) []int32 {
	var out []int32
	for _, a := range d.CmdArgs {
		if a.Key != key {
			continue
		}
		for _, v := range a.Vals {
			for _, f := range strings.Split(v, ",") {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, int32(n))
				}
			}
		}
	}
	return out
}

func splitBatches(b []byte) [][]byte {
	var out [][]byte
	for p := 0; p < len(b); {
		_, n, err := record.NextBatch(b[p:], len(b)-p)
		if err != nil {
			break
		}
		out = append(out, b[p:p+n])
		p += n
	}
	return out
}

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func errByName(name string) error {
	for code := int16(-1); code < 130; code++ {
		if e := kerr.ErrorForCode(code); e != nil && e.(*kerr.Error).Message == name {
			return e
		}
	}
	return errors.New(name)
}
