package localcluster

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildVarve builds cmd/varve into a temporary directory.
func buildVarve(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "varve")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/varve/varve/cmd/varve").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/varve: %v\n%s", err, out)
	}
	return bin
}

// answers reports whether addr answers a Kafka ApiVersions v0 request
// within wait.
func answers(addr string, wait time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	// size, api key 18 (ApiVersions), version 0, correlation id 7, null client id
	req := []byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff}
	if _, err := c.Write(req); err != nil {
		return false
	}
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return false
	}
	return binary.BigEndian.Uint32(head[4:]) == 7
}

// Three `varve server` processes, each on its own loopback address:
// started from the written properties, they serve; a paused node
// accepts connections but answers nothing until resumed; a killed node
// is gone until started again, with the same address; a restart is a
// new process; Stop shuts them all down cleanly; the logs hold every
// start.
func TestProcessControl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three varve server processes")
	}
	c, err := Up(Options{Dir: t.TempDir(), Binary: buildVarve(t), LogLevel: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill() })
	for _, n := range c.Nodes() {
		if !answers(n.Addr(), 5*time.Second) || n.Pid() == 0 {
			t.Fatalf("%s (pid %d) does not answer on %s", n.Name(), n.Pid(), n.Addr())
		}
	}
	n1, n2, n3 := c.Node(1), c.Node(2), c.Node(3)

	if err := n2.Pause(); err != nil {
		t.Fatal(err)
	}
	if answers(n2.Addr(), 500*time.Millisecond) {
		t.Fatal("a paused node answered")
	}
	if err := n2.Resume(); err != nil {
		t.Fatal(err)
	}
	if !answers(n2.Addr(), 5*time.Second) {
		t.Fatal("a resumed node does not answer")
	}

	if err := n3.Kill(); err != nil {
		t.Fatal(err)
	}
	if n3.Running() || answers(n3.Addr(), 500*time.Millisecond) {
		t.Fatal("a killed node still runs")
	}
	if err := n3.Start(); err != nil {
		t.Fatal(err)
	}
	if !answers(n3.Addr(), 5*time.Second) {
		t.Fatal("a node started again does not answer")
	}

	pid := n1.Pid()
	if err := n1.Restart(); err != nil {
		t.Fatal(err)
	}
	if n1.Pid() == pid || !answers(n1.Addr(), 5*time.Second) {
		t.Fatalf("restart: pid %d then %d", pid, n1.Pid())
	}

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		if n.Running() {
			t.Fatalf("%s runs after Stop", n.Name())
		}
		log, err := n.Log()
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if n != n2 {
			want = 2
		}
		if got := bytes.Count(log, []byte("=== "+n.Name()+": start")); got != want {
			t.Errorf("%s log has %d starts, want %d:\n%s", n.Name(), got, want, log)
		}
	}
}

// A node that cannot start (here: node 2's properties are invalid) is
// an error that says so, and Start leaves no node running, not even
// the one that started.
func TestStartFailureKillsTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs varve server processes")
	}
	c, err := New(Options{Nodes: 2, Dir: t.TempDir(), Binary: buildVarve(t), LogLevel: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	bad := append(c.PropertiesText(c.Node(2)), "log.segment.bytes=not a number\n"...)
	if err := os.WriteFile(c.Node(2).PropertiesFile(), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Start()
	if err == nil || !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("start with bad properties: %v", err)
	}
	for _, n := range c.Nodes() {
		if n.Running() {
			t.Fatalf("%s still runs", n.Name())
		}
	}
	if log, _ := c.Node(2).Log(); !bytes.Contains(log, []byte("log.segment.bytes")) {
		t.Errorf("node2's log does not name the bad property:\n%s", log)
	}
	select {
	case <-c.Node(1).Exited():
	default:
		t.Fatal("node1 was never started, or never stopped")
	}
}
