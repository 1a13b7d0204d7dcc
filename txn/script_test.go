package txn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/internal/scripttest"
	"github.com/varve/varve/record"
)

// Scripted interaction tests: each file under testdata/script drives one
// coordinator step by step (the commands are listed in scriptCommands)
// and shows what it answers, the markers it asks for, its transactions'
// states and the records it writes to __transaction_state. `go test
// ./txn -run TestScripts -rewrite` rewrites the expected output, to be
// reviewed like documentation.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return s.run(t, td)
		})
	})
}

// scriptStart is the scripts' clock origin; times print as offsets from it.
var scriptStart = time.UnixMilli(1_700_000_000_000)

type script struct {
	cfg     Config
	c       *Coordinator
	log     *MemoryLog
	now     time.Time
	nextPID int64
	level   int16           // transaction.version, kept across reloads
	shown   int             // records of the log already shown by "log"
	sent    []MarkerRequest // marker requests not yet reported written
	out     []string
}

var scriptCommands scripttest.Commands[*script]

func init() {
	scriptCommands = scripttest.Commands[*script]{
		"new":             (*script).cmdNew,
		"init":            (*script).cmdInit,
		"add":             (*script).cmdAdd,
		"add-offsets":     (*script).cmdAddOffsets,
		"verify":          (*script).cmdVerify,
		"end":             (*script).cmdEnd,
		"markers-written": (*script).cmdMarkersWritten,
		"tick":            (*script).cmdTick,
		"deadline":        (*script).cmdDeadline,
		"describe":        (*script).cmdDescribe,
		"list":            (*script).cmdList,
		"state":           (*script).cmdState,
		"log":             (*script).cmdLog,
		"fail-log":        (*script).cmdFailLog,
		"reload":          (*script).cmdReload,
		"unload":          (*script).cmdUnload,
		"tv-level":        (*script).cmdTVLevel,
		"set-epoch":       (*script).cmdSetEpoch,
	}
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	return scripttest.Dispatch(t, td, s, scriptCommands, s.c != nil, &s.out)
}

func (s *script) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

// Send implements Markers: it prints the request and keeps it for
// markers-written.
func (s *script) Send(r MarkerRequest) {
	s.sent = append(s.sent, r)
	s.printf("markers: %s", formatMarkers(r))
}

func formatMarkers(r MarkerRequest) string {
	kind := "ABORT"
	if r.Commit {
		kind = "COMMIT"
	}
	return fmt.Sprintf("%s %s pid=%d epoch=%d coordinator-epoch=%d partitions=%s",
		kind, r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.CoordinatorEpoch, formatTPs(r.Partitions))
}

// cmdNew starts a coordinator of partition 3 over an empty log, epoch 0:
//
//	new [max-timeout=15m] [expiration=168h] [abort-check=10s] [expire-check=1h]
//	    [first-pid=1000]
func (s *script) cmdNew(t *testing.T, td *datadriven.TestData) {
	cfg := Config{
		MaxTimeout:          durArg(t, td, "max-timeout", 0),
		IDExpiration:        durArg(t, td, "expiration", 0),
		AbortCheckInterval:  durArg(t, td, "abort-check", 0),
		ExpireCheckInterval: durArg(t, td, "expire-check", 0),
	}
	*s = script{cfg: cfg, log: &MemoryLog{}, now: scriptStart, nextPID: 1000}
	td.MaybeScanArgs(t, "first-pid", &s.nextPID)
	s.c = s.newCoordinator()
	s.c.BeginLoad(0)
	s.c.FinishLoad(s.now)
}

func (s *script) newCoordinator() *Coordinator {
	ids := func() (int64, error) {
		if s.nextPID < 0 {
			return 0, errors.New("no producer ids")
		}
		s.nextPID++
		return s.nextPID - 1, nil
	}
	c := New(3, s.cfg, s.log, ids, s)
	c.SetTransactionVersion(s.level)
	return c
}

// cmdInit sends InitProducerId with a transactional id:
//
//	init id=T [timeout=60000] [pid=N epoch=N]
func (s *script) cmdInit(t *testing.T, td *datadriven.TestData) {
	var id string
	td.ScanArgs(t, "id", &id)
	timeout, pid, epoch := int32(60000), int64(-1), int16(-1)
	td.MaybeScanArgs(t, "timeout", &timeout)
	td.MaybeScanArgs(t, "pid", &pid)
	td.MaybeScanArgs(t, "epoch", &epoch)
	r := s.c.InitProducerID(s.now, id, timeout, pid, epoch)
	if r.Code != 0 {
		s.printf("InitProducerId %s: %s", id, codeName(r.Code))
		return
	}
	s.printf("InitProducerId %s: pid=%d epoch=%d", id, r.ProducerID, r.Epoch)
}

// producerArgs reads id=T pid=N epoch=N.
func producerArgs(t *testing.T, td *datadriven.TestData) (string, int64, int16) {
	var id string
	var pid int64
	var epoch int16
	td.ScanArgs(t, "id", &id)
	td.ScanArgs(t, "pid", &pid)
	td.ScanArgs(t, "epoch", &epoch)
	return id, pid, epoch
}

// cmdAdd sends AddPartitionsToTxn (tv=2: v4+ from a partition leader,
// for a produce v12): add id=T pid=N epoch=N partitions=(t/0,...) [tv=N]
func (s *script) cmdAdd(t *testing.T, td *datadriven.TestData) {
	id, pid, epoch := producerArgs(t, td)
	var tv int16
	td.MaybeScanArgs(t, "tv", &tv)
	code := s.c.AddPartitions(s.now, id, pid, epoch, tpsArg(t, td), tv)
	s.printf("AddPartitionsToTxn %s: %s", id, codeName(code))
}

// cmdAddOffsets sends AddOffsetsToTxn for the group whose
// __consumer_offsets partition is given: add-offsets id=T pid=N epoch=N partition=P
func (s *script) cmdAddOffsets(t *testing.T, td *datadriven.TestData) {
	id, pid, epoch := producerArgs(t, td)
	var p int32
	td.ScanArgs(t, "partition", &p)
	code := s.c.AddOffsets(s.now, id, pid, epoch, TopicPartition{"__consumer_offsets", p})
	s.printf("AddOffsetsToTxn %s: %s", id, codeName(code))
}

// cmdVerify sends AddPartitionsToTxn verify_only, v4 unless v says
// otherwise:
//
//	verify id=T pid=N epoch=N partitions=(t/0,...) [v=N]
func (s *script) cmdVerify(t *testing.T, td *datadriven.TestData) {
	id, pid, epoch := producerArgs(t, td)
	tps := tpsArg(t, td)
	version := int16(4)
	td.MaybeScanArgs(t, "v", &version)
	res, code := s.c.VerifyPartitions(version, id, pid, epoch, tps)
	if code != 0 {
		s.printf("verify %s: %s", id, codeName(code))
		return
	}
	for _, tp := range tps {
		s.printf("verify %s %s/%d: %s", id, tp.Topic, tp.Partition, codeName(res[tp]))
	}
}

// cmdEnd sends EndTxn (tv=2: v5, transaction version 2, which answers
// the producer id and epoch to go on with):
//
//	end id=T pid=N epoch=N commit|abort [tv=N]
func (s *script) cmdEnd(t *testing.T, td *datadriven.TestData) {
	id, pid, epoch := producerArgs(t, td)
	commit := td.HasArg("commit")
	if commit == td.HasArg("abort") {
		td.Fatalf(t, "end needs commit or abort")
	}
	var tv int16
	td.MaybeScanArgs(t, "tv", &tv)
	r := s.c.EndTxn(s.now, id, pid, epoch, commit, tv)
	if tv >= 2 && r.Code == 0 {
		s.printf("EndTxn %s: OK pid=%d epoch=%d", id, r.ProducerID, r.Epoch)
		return
	}
	s.printf("EndTxn %s: %s", id, codeName(r.Code))
}

// cmdSetEpoch stands for thousands of transactions: it sets an id's
// epoch in memory, as if bumped that far: set-epoch id=T epoch=N
func (s *script) cmdSetEpoch(t *testing.T, td *datadriven.TestData) {
	var id string
	var epoch int16
	td.ScanArgs(t, "id", &id)
	td.ScanArgs(t, "epoch", &epoch)
	m := s.c.txns[id]
	if m == nil {
		td.Fatalf(t, "set-epoch: no %s", id)
	}
	m.epoch, m.lastEpoch = epoch, epoch-1
}

// cmdTVLevel sets the cluster's finalized transaction.version: tv-level level=N
func (s *script) cmdTVLevel(t *testing.T, td *datadriven.TestData) {
	td.ScanArgs(t, "level", &s.level)
	s.c.SetTransactionVersion(s.level)
}

// cmdMarkersWritten reports the oldest pending marker request of id as
// written (or, with stale, a request as the coordinator no longer
// expects it: another coordinator epoch):
//
//	markers-written id=T [coordinator-epoch=N]
func (s *script) cmdMarkersWritten(t *testing.T, td *datadriven.TestData) {
	var id string
	td.ScanArgs(t, "id", &id)
	for i, r := range s.sent {
		if r.TransactionalID != id {
			continue
		}
		if td.HasArg("coordinator-epoch") { // a stale report: the request stays pending
			td.ScanArgs(t, "coordinator-epoch", &r.CoordinatorEpoch)
		} else {
			s.sent = append(s.sent[:i], s.sent[i+1:]...)
		}
		s.c.MarkersWritten(s.now, r)
		return
	}
	td.Fatalf(t, "no markers pending for %s", id)
}

// cmdTick advances the clock and runs what is due: tick 10s
func (s *script) cmdTick(t *testing.T, td *datadriven.TestData) {
	if len(td.CmdArgs) != 1 {
		td.Fatalf(t, "tick DURATION")
	}
	d, err := time.ParseDuration(td.CmdArgs[0].Key)
	if err != nil {
		td.Fatalf(t, "tick: %v", err)
	}
	s.now = s.now.Add(d)
	s.printf("time %s", s.since(s.now))
	s.c.Tick(s.now)
}

func (s *script) cmdDeadline(t *testing.T, td *datadriven.TestData) {
	if next, ok := s.c.NextDeadline(); ok {
		s.printf("next deadline %s", s.since(next))
	} else {
		s.printf("no deadline")
	}
}

// cmdDescribe sends DescribeTransactions: describe id=T
func (s *script) cmdDescribe(t *testing.T, td *datadriven.TestData) {
	var id string
	td.ScanArgs(t, "id", &id)
	d := s.c.Describe(id)
	if d.Code != 0 {
		s.printf("describe %s: %s", id, codeName(d.Code))
		return
	}
	s.printf("describe %s: %s pid=%d epoch=%d timeout=%d start=%s partitions=%s", id, d.State,
		d.ProducerID, d.Epoch, d.TimeoutMs, s.sinceMs(d.StartTimestamp), formatTPs(d.Partitions))
}

// cmdList sends ListTransactions:
//
//	list [states=(Ongoing,...)] [pids=(N,...)] [duration=1s] [prefix=P]
func (s *script) cmdList(t *testing.T, td *datadriven.TestData) {
	var f ListFilter
	var states []string
	td.MaybeScanArgs(t, "states", &states)
	for _, n := range states {
		st, ok := ParseState(n)
		if !ok {
			td.Fatalf(t, "unknown state %q", n)
		}
		f.States = append(f.States, st)
	}
	td.MaybeScanArgs(t, "pids", &f.ProducerIDs)
	f.MinDuration = durArg(t, td, "duration", 0)
	if td.HasArg("prefix") {
		var p string
		td.ScanArgs(t, "prefix", &p)
		f.Match = func(id string) bool { return strings.HasPrefix(id, p) }
	}
	ls, code := s.c.List(s.now, f)
	if code != 0 {
		s.printf("list: %s", codeName(code))
	}
	for _, l := range ls {
		s.printf("%s pid=%d %s", l.TransactionalID, l.ProducerID, l.State)
	}
}

// cmdState prints every transactional id's state, lastEpoch included.
func (s *script) cmdState(t *testing.T, td *datadriven.TestData) {
	for _, id := range s.c.sortedIDs() {
		m := s.c.txns[id]
		s.printf("%s: %s pid=%d epoch=%d last-epoch=%d timeout=%d start=%s updated=%s partitions=%s%s",
			id, m.state, m.producerID, m.epoch, m.lastEpoch, m.timeoutMs, s.sinceMs(m.start),
			s.sinceMs(m.updated), formatTPs(m.sortedPartitions()), formatV2(m))
	}
}

// cmdLog prints the records written since the last "log", decoded.
func (s *script) cmdLog(t *testing.T, td *datadriven.TestData) {
	var recs []record.Record
	buf := s.log.Bytes()
	n := 0
	for pos := 0; pos < len(buf); {
		_, size, err := record.NextBatch(buf[pos:], len(buf)-pos)
		if err != nil {
			td.Fatalf(t, "log: %v", err)
		}
		if recs, err = record.DecodeBatch(buf[pos:pos+size], recs); err != nil {
			td.Fatalf(t, "log: %v", err)
		}
		pos += size
		for _, r := range recs {
			if n++; n > s.shown {
				s.printRecord(r)
			}
		}
	}
	s.shown = n
}

func (s *script) printRecord(r record.Record) {
	id, m, ok := decode(r.Key, r.Value)
	switch {
	case !ok:
		s.printf("undecodable record")
	case m == nil:
		s.printf("%s: tombstone", id)
	default:
		s.printf("%s: %s pid=%d epoch=%d timeout=%d start=%s updated=%s partitions=%s%s", id, m.state,
			m.producerID, m.epoch, m.timeoutMs, s.sinceMs(m.start), s.sinceMs(m.updated), formatTPs(m.sortedPartitions()),
			formatV2(m))
	}
}

// formatV2 shows what transaction version 2 adds, when set: the client's
// transaction version, the next producer id and, rotated, the last one.
func formatV2(m *meta) string {
	var out string
	if m.tv != 0 {
		out += fmt.Sprintf(" tv=%d", m.tv)
	}
	if m.nextProducerID >= 0 {
		out += fmt.Sprintf(" next-pid=%d", m.nextProducerID)
	}
	if m.lastProducerID >= 0 {
		out += fmt.Sprintf(" last-pid=%d", m.lastProducerID)
	}
	return out
}

// cmdFailLog makes the log's appends fail with a Kafka error (by name),
// or succeed again: fail-log err=NOT_LEADER_FOR_PARTITION | fail-log off
func (s *script) cmdFailLog(t *testing.T, td *datadriven.TestData) {
	if td.HasArg("off") {
		s.log.Fail = nil
		return
	}
	var name string
	td.ScanArgs(t, "err", &name)
	for code := int16(-1); code < 200; code++ {
		if e := kerr.ErrorForCode(code); e != nil && e.Error() != "" && errName(e) == name {
			s.log.Fail = fmt.Errorf("append: %w", e)
			return
		}
	}
	s.log.Fail = errors.New(name) // not a Kafka error: a storage failure
}

// cmdReload replaces the coordinator with one that loads the log, as a
// restarted or newly elected leader does: reload [epoch=N]
func (s *script) cmdReload(t *testing.T, td *datadriven.TestData) {
	epoch := s.c.Epoch() + 1
	td.MaybeScanArgs(t, "epoch", &epoch)
	s.sent = nil
	s.c = s.newCoordinator()
	s.c.BeginLoad(epoch)
	if _, err := s.c.Load(s.log.Bytes()); err != nil {
		td.Fatalf(t, "load: %v", err)
	}
	rep := s.c.FinishLoad(s.now)
	s.printf("loaded: records=%d skipped=%d transactions=%d pending=%d", rep.Records, rep.Skipped, rep.Transactions, rep.Pending)
}

// cmdUnload stops the coordinator, as when its partition's leadership
// moves away.
func (s *script) cmdUnload(t *testing.T, td *datadriven.TestData) {
	s.c.Stop()
}

func codeName(code int16) string { return scripttest.CodeName(code) }

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func (s *script) since(t time.Time) string { return scripttest.Since(scriptStart, t) }

func (s *script) sinceMs(ms int64) string {
	if ms < 0 {
		return "none"
	}
	return s.since(time.UnixMilli(ms))
}

func formatTPs(tps []TopicPartition) string {
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = tp.Topic + "/" + strconv.Itoa(int(tp.Partition))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func tpsArg(t *testing.T, td *datadriven.TestData) []TopicPartition {
	var ss []string
	td.ScanArgs(t, "partitions", &ss)
	var out []TopicPartition
	for _, x := range ss {
		topic, p, ok := strings.Cut(x, "/")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			td.Fatalf(t, "%q is not topic/partition", x)
		}
		out = append(out, TopicPartition{topic, int32(n)})
	}
	return out
}

func durArg(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	return scripttest.DurArg(t, td, key, def)
}
