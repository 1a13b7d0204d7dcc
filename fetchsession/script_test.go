package fetchsession

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Scripted interaction tests: each file under testdata/script drives a
// cache (and a fetcher's handler) step by step and shows what each
// fetch is told. `go test ./fetchsession -rewrite` rewrites the expected
// output, to be reviewed like documentation.
//
// Commands:
//
//	new slots=N eviction=MS         a cache; session ids drawn 1, 2, ...
//	fetch name=X session=ID epoch=E at=MS [v=V] [follower]
//	  <topic>-<p> [off=N] [max=N] [epoch=N]   partitions (one a line)
//	  forget <topic>-<p>                        ForgottenTopicsData
//	respond name=X at=MS
//	  <topic>-<p> [records=N] [hw=N] [start=N] [err=NAME] [diverging] [preferred=ID]
//	sessions                        the cache's sessions
//	build                           the handler's next request
//	  <topic>-<p> [off=N] ...       the partitions wanted now
//	handle [err=NAME] [session=ID]  the handler takes a response
//	lost                            the handler's request got no response
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		s := &script{ctxs: map[string]*Context{}}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return s.run(t, td)
		})
	})
}

type script struct {
	c    *Cache
	ctxs map[string]*Context
	h    Handler
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	a := args(td)
	switch td.Cmd {
	case "new":
		next := int32(0)
		s.c = NewCache(Config{Slots: atoi(a["slots"]), EvictionMs: int64(atoi(a["eviction"])),
			NewID: func() int32 { next++; return next }})
		return "ok"
	case "fetch":
		return s.fetch(td, a)
	case "respond":
		return s.respond(td, a)
	case "sessions":
		return s.sessions()
	case "build":
		return s.build(td)
	case "handle":
		ok := s.h.HandleResponse(errCode(a["err"]), int32(atoi(a["session"])))
		id, epoch := s.h.Session()
		return fmt.Sprintf("usable=%v next session=%d epoch=%d", ok, id, epoch)
	case "lost":
		s.h.HandleError()
		id, epoch := s.h.Session()
		return fmt.Sprintf("next session=%d epoch=%d", id, epoch)
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return ""
}

func (s *script) fetch(td *datadriven.TestData, a map[string]string) string {
	v := 17
	if x, ok := a["v"]; ok {
		v = atoi(x)
	}
	req := Request{Version: int16(v), SessionID: int32(atoi(a["session"])), Epoch: int32(atoi(a["epoch"])),
		NowMs: int64(atoi(a["at"])), Follower: has(a, "follower")}
	for _, line := range lines(td.Input) {
		f := strings.Fields(line)
		if f[0] == "forget" {
			req.Forgotten = append(req.Forgotten, key(f[1], v))
			continue
		}
		req.Partitions = append(req.Partitions, partition(f, v))
	}
	ctx := s.c.NewContext(req)
	s.ctxs[a["name"]] = ctx
	var b strings.Builder
	fmt.Fprintf(&b, "%s", ctx.Kind)
	if ctx.Kind == SessionError {
		fmt.Fprintf(&b, " %s", kerr.ErrorForCode(ctx.ErrorCode).(*kerr.Error).Message)
	}
	for _, p := range ctx.Partitions {
		fmt.Fprintf(&b, "\n  read %s off=%d", keyString(p.Key), p.FetchOffset)
	}
	return b.String()
}

func (s *script) respond(td *datadriven.TestData, a map[string]string) string {
	ctx := s.ctxs[a["name"]]
	answers := make([]Answer, len(ctx.Partitions))
	for i := range answers {
		answers[i] = Answer{HighWatermark: 0, LogStartOffset: 0, PreferredReadReplica: -1}
	}
	for _, line := range lines(td.Input) {
		f := strings.Fields(line)
		i := indexOf(ctx.Partitions, f[0])
		if i < 0 {
			return "no partition " + f[0] + " in the fetch"
		}
		answers[i] = answer(f[1:])
	}
	r := s.c.Respond(ctx, answers, int64(atoi(a["at"])))
	var b strings.Builder
	fmt.Fprintf(&b, "session=%d", r.SessionID)
	if r.ErrorCode != 0 {
		fmt.Fprintf(&b, " %s", kerr.ErrorForCode(r.ErrorCode).(*kerr.Error).Message)
	}
	for i, p := range ctx.Partitions {
		if r.Keep == nil || r.Keep[i] {
			fmt.Fprintf(&b, "\n  answer %s", keyString(p.Key))
		}
	}
	return b.String()
}

func (s *script) sessions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions, %d partitions, %d evicted", s.c.Len(), s.c.Partitions(), s.c.Evictions())
	for id := int32(1); id <= 1000; id++ {
		ss, ok := s.c.sessions[id]
		if !ok {
			continue
		}
		var parts []string
		for _, p := range ss.parts {
			parts = append(parts, fmt.Sprintf("%s@%d", keyString(p.Key), p.FetchOffset))
		}
		fmt.Fprintf(&b, "\n  %d epoch=%d privileged=%v created=%d used=%d [%s]", id, ss.epoch, ss.privileged,
			ss.creationMs, ss.lastUsedMs, strings.Join(parts, " "))
	}
	return b.String()
}

func (s *script) build(td *datadriven.TestData) string {
	var want []Partition
	for _, line := range lines(td.Input) {
		want = append(want, partition(strings.Fields(line), 12))
	}
	out := s.h.Build(want)
	var b strings.Builder
	fmt.Fprintf(&b, "session=%d epoch=%d full=%v", out.SessionID, out.Epoch, out.Full())
	for _, p := range out.Partitions {
		fmt.Fprintf(&b, "\n  send %s off=%d", keyString(p.Key), p.FetchOffset)
	}
	for _, k := range out.Forgotten {
		fmt.Fprintf(&b, "\n  forget %s", keyString(k))
	}
	return b.String()
}

func partition(f []string, v int) Partition {
	p := Partition{Key: key(f[0], v), Params: Params{LogStartOffset: -1, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}
	for _, kv := range f[1:] {
		k, val, _ := strings.Cut(kv, "=")
		n := int64(atoi(val))
		switch k {
		case "off":
			p.FetchOffset = n
		case "max":
			p.MaxBytes = int32(n)
		case "epoch":
			p.CurrentLeaderEpoch = int32(n)
		case "start":
			p.LogStartOffset = n
		}
	}
	return p
}

func answer(f []string) Answer {
	a := Answer{PreferredReadReplica: -1}
	for _, kv := range f {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "records":
			a.RecordsBytes = int64(atoi(val))
		case "hw":
			a.HighWatermark = int64(atoi(val))
		case "start":
			a.LogStartOffset = int64(atoi(val))
		case "err":
			a.ErrorCode = errCode(val)
		case "diverging":
			a.Diverging = true
		case "preferred":
			a.PreferredReadReplica = int32(atoi(val))
		}
	}
	return a
}

// key names t-p by topic id from v13 (the id spells the name), by name
// before.
func key(s string, v int) Key {
	i := strings.LastIndexByte(s, '-')
	k := Key{Partition: int32(atoi(s[i+1:]))}
	if v >= 13 {
		copy(k.TopicID[:], s[:i])
	} else {
		k.Topic = s[:i]
	}
	return k
}

func keyString(k Key) string {
	if k.Topic != "" {
		return fmt.Sprintf("%s-%d", k.Topic, k.Partition)
	}
	return fmt.Sprintf("%s-%d", bytes.TrimRight(k.TopicID[:], "\x00"), k.Partition)
}

func indexOf(ps []Partition, name string) int {
	for i, p := range ps {
		if keyString(p.Key) == name {
			return i
		}
	}
	return -1
}

func errCode(name string) int16 {
	switch name {
	case "":
		return 0
	case "not_leader":
		return kerr.NotLeaderForPartition.Code
	case "offset_out_of_range":
		return kerr.OffsetOutOfRange.Code
	case "session_not_found":
		return kerr.FetchSessionIDNotFound.Code
	case "invalid_epoch":
		return kerr.InvalidFetchSessionEpoch.Code
	}
	panic("unknown error " + name)
}

func args(td *datadriven.TestData) map[string]string {
	m := map[string]string{}
	for _, a := range td.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	return m
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func atoi(s string) int {
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
