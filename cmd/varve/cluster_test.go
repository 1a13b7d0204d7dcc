package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// varve cluster up starts three nodes on 127.0.0.1-3, prints the
// bootstrap servers and each node's pid, addresses and log, serves
// until interrupted, and then stops every node.
func TestClusterUpStartsAndStopsNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds varve and runs three server processes")
	}
	bin := filepath.Join(t.TempDir(), "varve")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runClusterUp(ctx, &out, bin, clusterUpOptions{nodes: 3, dir: t.TempDir(), logLevel: "warn",
			overrides: []string{"num.partitions=2"}})
	}()
	rows := waitForNodeRows(t, &out, done)
	for i, row := range rows {
		host := "127.0.0." + strconv.Itoa(i+1)
		if !strings.HasPrefix(row[2], host+":") || !strings.HasPrefix(row[3], host+":") {
			t.Errorf("node %d listens on %s and %s, want %s", i+1, row[2], row[3], host)
		}
		if c, err := net.DialTimeout("tcp", row[2], time.Second); err != nil {
			t.Errorf("node %d: %v", i+1, err)
		} else {
			c.Close()
		}
	}
	if !strings.Contains(out.String(), "bootstrap servers: "+rows[0][2]+","+rows[1][2]+","+rows[2][2]+"\n") {
		t.Errorf("no bootstrap servers line:\n%s", out.String())
	}
	// The nodes form one cluster: a replicated topic, and cluster status
	// shows three voters, three brokers and nothing under-replicated.
	mustVarveCluster(t, "topic", "create", "up", "--partitions", "2", "--replication-factor", "3", "-b", rows[1][2])
	var status string
	deadline := time.Now().Add(30 * time.Second)
	for {
		status = mustVarveCluster(t, "cluster", "status", "-b", rows[2][2])
		if strings.Contains(status, "brokers (unfenced): 3") && strings.Contains(status, "partitions: 2, without a leader: 0, under-replicated: 0") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := strings.Count(status, "  voter "); n != 3 || !strings.Contains(status, "quorum: leader ") ||
		!strings.Contains(status, "partitions: 2, without a leader: 0, under-replicated: 0") {
		t.Errorf("cluster status:\n%s", status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		pid, _ := strconv.Atoi(row[1])
		if err := syscall.Kill(pid, 0); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("node pid %d still runs after cluster up returned", pid)
		}
	}
}

var nodeRow = regexp.MustCompile(`(?m)^(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+server\.properties)\s+(\S+server\.log)$`)

// waitForNodeRows waits for cluster up's table of nodes and returns
// each row's node, pid, broker and controller address.
func waitForNodeRows(t *testing.T, out *syncBuffer, done chan error) [][]string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("cluster up returned early: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if !strings.Contains(out.String(), "Ctrl-C") {
			continue
		}
		var rows [][]string
		for _, m := range nodeRow.FindAllStringSubmatch(out.String(), -1) {
			rows = append(rows, m[1:5])
		}
		if len(rows) != 3 {
			t.Fatalf("want 3 node rows:\n%s", out.String())
		}
		return rows
	}
	t.Fatalf("cluster up printed no nodes:\n%s", out.String())
	return nil
}

// mustVarveCluster runs a client command line, cluster status included.
func mustVarveCluster(t *testing.T, args ...string) string {
	t.Helper()
	root := &cobra.Command{Use: "varve", SilenceUsage: true, SilenceErrors: true}
	cc := &cobra.Command{Use: "cluster"}
	cc.AddCommand(newClusterStatusCmd())
	root.AddCommand(newTopicCmd(), cc)
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("varve %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}
