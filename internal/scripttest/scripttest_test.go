package scripttest

import (
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

type counter struct {
	n   int
	out []string
}

// A command's printed lines are its output, "ok" when it prints none;
// arguments, codes and times print as every script shows them.
func TestDispatch(t *testing.T) {
	cmds := Commands[*counter]{
		"new":  func(c *counter, _ *testing.T, _ *datadriven.TestData) { c.n = 0 },
		"incr": func(c *counter, t *testing.T, td *datadriven.TestData) { c.n++; c.out = append(c.out, "n", "more") },
	}
	c := &counter{}
	if got := Dispatch(t, &datadriven.TestData{Cmd: "new"}, c, cmds, false, &c.out); got != "ok\n" {
		t.Fatalf("new: %q", got)
	}
	if got := Dispatch(t, &datadriven.TestData{Cmd: "incr"}, c, cmds, true, &c.out); got != "n\nmore\n" || c.n != 1 {
		t.Fatalf("incr: %q n=%d", got, c.n)
	}
	td := &datadriven.TestData{Cmd: "x", CmdArgs: []datadriven.CmdArg{{Key: "d", Vals: []string{"1m30s"}}}}
	if d := DurArg(t, td, "d", 0); d != 90*time.Second {
		t.Fatalf("DurArg: %v", d)
	}
	if d := DurArg(t, td, "absent", time.Hour); d != time.Hour {
		t.Fatalf("DurArg default: %v", d)
	}
	if CodeName(0) != "ok" || CodeName(kerr.ProducerFenced.Code) != "PRODUCER_FENCED" {
		t.Fatalf("CodeName: %q %q", CodeName(0), CodeName(kerr.ProducerFenced.Code))
	}
	o := time.UnixMilli(0)
	if s := Since(o, o.Add(1500*time.Millisecond)); s != "+1.5s" {
		t.Fatalf("Since: %q", s)
	}
}
