package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fillTopic creates topic with one partition holding values 0..n-1.
func fillTopic(t *testing.T, b, topic string, n int) {
	t.Helper()
	mustVarve(t, "", "topic", "create", topic, "-b", b, "-p", "1")
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "%d\n", i)
	}
	mustVarve(t, in.String(), "produce", topic, "-b", b)
}

// kcat -o: earliest, latest, an absolute offset, N before the end and a
// timestamp (ListOffsets by time); -c stops after a count.
func TestConsumeOffsets(t *testing.T) {
	b := startCluster(t)
	fillTopic(t, b, "o", 10)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-beginning", "-e"}, "0 1 2 3 4 5 6 7 8 9"},
		{[]string{"-o", "earliest", "-c", "3"}, "0 1 2"},
		{[]string{"-o", "latest", "-e"}, ""},
		{[]string{"-e"}, ""},
		{[]string{"-o", "7", "-e"}, "7 8 9"},
		{[]string{"-o", "-2", "-e"}, "8 9"},
		{[]string{"-o", "-20", "-e"}, "0 1 2 3 4 5 6 7 8 9"},
		{[]string{"-o", "@0", "-e"}, "0 1 2 3 4 5 6 7 8 9"},
		{[]string{"-o", fmt.Sprintf("@%d", time.Now().Add(time.Hour).UnixMilli()), "-e"}, ""},
		{[]string{"-o", "25", "-e"}, ""},
	} {
		args := append([]string{"consume", "o", "-b", b, "-f", `%v `}, c.args...)
		if got := strings.TrimSpace(mustVarve(t, "", args...)); got != c.want {
			t.Errorf("%v: got %q, want %q", c.args, got, c.want)
		}
	}
	for _, bad := range [][]string{{"-o", "soon"}, {"-o", "@x"}, {"-f", "%q"}, {"-o", "1", "--from-beginning"}, {"--partition", "5"}} {
		args := append([]string{"consume", "o", "-b", b, "-e"}, bad...)
		if _, _, err := varve(t, "", args...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// Records produced while consume waits are printed: the consumer
// long-polls the end of the log.
func TestConsumeFollowsNewRecords(t *testing.T) {
	b := startCluster(t)
	fillTopic(t, b, "f", 0)
	done := make(chan string, 1)
	go func() {
		out, _, _ := varve(t, "", "consume", "f", "-b", b, "-c", "2", "-f", `%v,`)
		done <- out
	}()
	deadline := time.After(30 * time.Second)
	for {
		mustVarve(t, "", "produce", "f", "-b", b, "--value", "x")
		select {
		case out := <-done:
			if out != "x,x," {
				t.Fatalf("consumed %q", out)
			}
			return
		case <-deadline:
			t.Fatal("consume -c 2 did not end while records arrived")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Kafka consumer groups: a member resumes from the group's committed
// offset, and commits only what it printed (kgo's group consumer; kfake
// has a group coordinator).
func TestConsumeGroupResumes(t *testing.T) {
	b := startCluster(t)
	fillTopic(t, b, "g", 5)
	first := mustVarve(t, "", "consume", "g", "-b", b, "--group", "readers", "--from-beginning", "-c", "2", "-f", `%v `)
	second := mustVarve(t, "", "consume", "g", "-b", b, "--group", "readers", "--from-beginning", "-e", "-f", `%v `)
	if first != "0 1 " || second != "2 3 4 " {
		t.Errorf("first %q then %q, want 0 1 then 2 3 4", first, second)
	}
	if _, _, err := varve(t, "", "consume", "g", "-b", b, "--group", "x", "--partition", "0"); err == nil {
		t.Error("--group with --partition accepted")
	}
}

// kcat -f tokens, escapes, and the lengths of null fields.
func TestRecordFormat(t *testing.T) {
	r := &kgo.Record{Topic: "tp", Partition: 3, Offset: 42, Key: []byte("k"), Value: []byte("val"),
		Timestamp: time.UnixMilli(1700000000123), Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b"}}}
	for format, want := range map[string]string{
		defaultFormat:                     "val\n",
		`%t/%p/%o/%T`:                     "tp/3/42/1700000000123",
		`%k:%K %s:%S %h`:                  "k:1 val:3 a=1,b=",
		`100%% \t\\ \x`:                   "100% \t\\ x",
		`trailing %`:                      "trailing %",
		`%v` + "\n":                       "val\n",
		`Key (%K bytes): %k\nValue: %v\n`: "Key (1 bytes): k\nValue: val\n",
	} {
		f, err := parseRecordFormat(format)
		if err != nil {
			t.Fatalf("%q: %v", format, err)
		}
		if got := string(f.appendRecord(nil, r)); got != want {
			t.Errorf("%q: got %q, want %q", format, got, want)
		}
	}
	f, _ := parseRecordFormat(`%K %S`)
	if got := string(f.appendRecord(nil, &kgo.Record{})); got != "-1 -1" {
		t.Errorf("null key and value lengths %q, want -1 -1", got)
	}
	if _, err := parseRecordFormat(`%z`); err == nil {
		t.Error("%z accepted")
	}
}
