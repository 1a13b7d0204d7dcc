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
	rows := waitForNodeRows(t, &out, done, 3)
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

var nodeRow = regexp.MustCompile(`(?m)^(\d+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)(?: \(learner\))?\s+(\S+server\.properties)\s+(\S+server\.log)$`)

// waitForNodeRows waits for cluster up's table of n nodes and returns
// each row's node, pid, broker and controller address, and roles.
func waitForNodeRows(t *testing.T, out *syncBuffer, done chan error, n int) [][]string {
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
			rows = append(rows, []string{m[1], m[3], m[4], m[5], m[2]})
		}
		if len(rows) != n {
			t.Fatalf("want %d node rows:\n%s", n, out.String())
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

// varve cluster up --controllers 3 --nodes 2: three dedicated
// controllers (no client listener) and two brokers. The brokers serve
// a replicated topic; cluster status shows three voters, two observers
// (the brokers, raft learners) and two brokers; the active controller's
// process is killed with SIGKILL and the cluster still creates topics.
func TestClusterUpDedicatedControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds varve and runs five server processes")
	}
	bin := filepath.Join(t.TempDir(), "varve")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		done <- runClusterUp(ctx, &out, bin, clusterUpOptions{nodes: 2, controllers: 3, dir: dir, logLevel: "warn",
			overrides: []string{"broker.session.timeout.ms=3000", "broker.heartbeat.interval.ms=500"}})
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cancel()
			<-done
		}
	})
	rows := waitForNodeRows(t, &out, done, 5)
	for i, row := range rows {
		wantRoles, wantBroker := "controller", "-"
		if i >= 3 {
			wantRoles, wantBroker = "broker", row[2]
		}
		if row[4] != wantRoles || row[2] != wantBroker {
			t.Errorf("node %d: roles %s broker %s", i+1, row[4], row[2])
		}
	}
	broker := rows[3][2]
	waitStatus(t, broker, "brokers (unfenced): 2")
	mustVarveCluster(t, "topic", "create", "before", "--partitions", "2", "--replication-factor", "2", "-b", broker)
	status := waitStatus(t, broker, "partitions: 2, without a leader: 0, under-replicated: 0")
	if strings.Count(status, "  voter ") != 3 || strings.Count(status, "  observer ") != 2 || !strings.Contains(status, "brokers (unfenced): 2") {
		t.Errorf("cluster status:\n%s", status)
	}
	m := regexp.MustCompile(`quorum: leader (\d+),`).FindStringSubmatch(status)
	leader, _ := strconv.Atoi(m[1])
	if leader < 1 || leader > 3 {
		t.Fatalf("quorum leader %d is not a controller:\n%s", leader, status)
	}
	pid, _ := strconv.Atoi(rows[leader-1][1])
	syscall.Kill(pid, syscall.SIGKILL)
	mustVarveCluster(t, "topic", "create", "after", "--partitions", "2", "--replication-factor", "2", "-b", rows[4][2])
	status = waitStatus(t, broker, "partitions: 4, without a leader: 0, under-replicated: 0")
	if strings.Contains(status, "quorum: leader "+m[1]+",") {
		t.Errorf("the killed controller still leads:\n%s", status)
	}
	cancel()
	<-done
	stopped = true
}

// waitStatus runs cluster status against addr until its output holds
// want, or 30 s pass.
func waitStatus(t *testing.T, addr, want string) string {
	t.Helper()
	var status string
	deadline := time.Now().Add(30 * time.Second)
	for {
		status = mustVarveCluster(t, "cluster", "status", "-b", addr)
		if strings.Contains(status, want) || time.Now().After(deadline) {
			return status
		}
		time.Sleep(200 * time.Millisecond)
	}
}
