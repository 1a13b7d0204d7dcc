package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// group is the console consumer's group during the leader kill.
const group = "tools-group"

// child is a tool running in the background.
type child struct {
	tool, command string
	cmd           *exec.Cmd
	out           lockedBuffer // stdout and stderr
	stdin         io.WriteCloser
	done          chan error
}

// start runs tool in its own process group (killed with this process),
// its standard input a pipe when withStdin.
func (e *exp) start(tool string, withStdin bool, args ...string) (*child, error) {
	args = append([]string{"--bootstrap-server", e.bootstrap}, args...)
	argv := e.tools.argv(tool, args...)
	c := &child{tool: tool, command: e.tools.commandLine(tool, args...), done: make(chan error, 1)}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if withStdin {
		var err error
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", tool, err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c, nil
}

// lockedBuffer is a bytes.Buffer the child writes while the experiment
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wait waits for the child to exit, killing its group after timeout,
// and returns its exit status (-1: killed).
func (c *child) wait(timeout time.Duration) int {
	select {
	case err := <-c.done:
		return exitStatus(err)
	case <-time.After(timeout):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
		return -1
	}
}

// lineOf is the i-th produced line.
func lineOf(i int) string { return fmt.Sprintf("line-%06d", i) }

func (e *exp) failoverSteps(ctx context.Context) {
	_, ok := e.step(ctx, "--create --partitions 1 --replication-factor 3 --config min.insync.replicas=2",
		`exit 0, "Created topic tools-failover."`, contains("Created topic "+failoverTopic+"."),
		"kafka-topics", "--create", "--topic", failoverTopic, "--partitions", "1", "--replication-factor", "3",
		"--config", "min.insync.replicas=2")
	if !ok {
		return
	}
	leader, err := e.leaderOf(ctx, failoverTopic, 0)
	if err != nil {
		e.record(outcome{Tool: "kafka-console-producer", Title: "leader kill", Seen: "no leader for " + failoverTopic + "-0: " + err.Error()})
		return
	}
	sent, kill, err := e.produceThroughKill(ctx, leader)
	if err != nil {
		e.record(outcome{Tool: "kafka-console-producer", Title: "leader kill", Seen: err.Error()})
		return
	}
	e.step(ctx, "--from-beginning after the kill (a second consumer)",
		fmt.Sprintf("exit 0; each of the %d lines exactly once, in order", len(sent)),
		exitedZero(func(out string) (string, bool) {
			r := compareLines(sent, consumedLines(out, "line-"))
			return r.String(), r.exactlyOnce()
		}), "kafka-console-consumer", "--topic", failoverTopic, "--from-beginning",
		"--max-messages", strconv.Itoa(len(sent)), "--timeout-ms", "30000")
	want := strconv.Itoa(len(sent))
	e.step(ctx, "--describe --group "+group,
		fmt.Sprintf("exit 0; %s-0 with CURRENT-OFFSET and LOG-END-OFFSET %s, LAG 0", failoverTopic, want),
		exitedZero(func(out string) (string, bool) {
			for _, r := range parseGroupDescribe(out) {
				if r.Topic == failoverTopic && r.Partition == 0 {
					return fmt.Sprintf("%s-0: current %s, log end %s, lag %s", r.Topic, r.Current, r.End, r.Lag),
						r.Current == want && r.End == want && r.Lag == "0"
				}
			}
			return "no row for " + failoverTopic + "-0", false
		}), "kafka-consumer-groups", "--describe", "--group", group)
	e.rejoin(ctx, kill)
}

// killed says which node was killed, and when.
type killed struct {
	node     int32
	atLine   int // lines written to the producer before the kill
	consumed int // lines the consumer had printed by then
}

// produceThroughKill feeds the console producer one numbered line every
// interval while a console consumer in a group reads them. Once the
// consumer has printed a quarter of the lines (so the producer is
// running and its records are committed through the leader), the
// leader's node is killed with SIGKILL; writing pauses at three
// quarters until then. It records the producer's and the consumer's
// outcomes and returns the lines sent.
func (e *exp) produceThroughKill(ctx context.Context, leader int32) ([]string, killed, error) {
	n := e.cfg.lines
	cons, err := e.start("kafka-console-consumer", false, "--topic", failoverTopic, "--group", group,
		"--from-beginning", "--max-messages", strconv.Itoa(n), "--timeout-ms", "60000")
	if err != nil {
		return nil, killed{}, err
	}
	prod, err := e.start("kafka-console-producer", true, "--topic", failoverTopic,
		"--command-property", "acks=all", "--command-property", "enable.idempotence=true")
	if err != nil {
		cons.wait(0)
		return nil, killed{}, err
	}
	fmt.Fprintf(os.Stderr, "== kafka-console-producer: %d lines, acks=all; SIGKILL of node %d (the leader) once %d are consumed\n", n, leader, n/4)
	k := killed{node: leader, atLine: -1}
	start := time.Now()
	var sent []string
	var killErr error
	var killedAt time.Duration
	kill := func() {
		killedAt, k.atLine, k.consumed = time.Since(start), len(sent), len(consumedLines(cons.out.String(), "line-"))
		killErr = e.cluster.Node(int(leader)).Kill()
	}
	for i := range n {
		if k.atLine < 0 && len(consumedLines(cons.out.String(), "line-")) >= n/4 {
			kill()
		}
		for wait := time.Now(); k.atLine < 0 && i == 3*n/4; {
			if time.Since(wait) > time.Minute || ctx.Err() != nil {
				kill() // the consumer is stuck: kill anyway, the verdicts will say so
				break
			}
			time.Sleep(50 * time.Millisecond)
			if len(consumedLines(cons.out.String(), "line-")) >= n/4 {
				kill()
			}
		}
		line := lineOf(i)
		if _, err := io.WriteString(prod.stdin, line+"\n"); err != nil {
			break // the producer exited: its outcome says why
		}
		sent = append(sent, line)
		if ctx.Err() != nil {
			break
		}
		time.Sleep(e.cfg.interval)
	}
	prod.stdin.Close()
	pexit := prod.wait(3 * time.Minute)
	pout := prod.out.String()
	sendErrors := strings.Count(pout, "Error when sending message")
	seen := fmt.Sprintf("%d lines written in %s; node %d killed %s in, after %d lines were written and %d consumed",
		len(sent), time.Since(start).Round(time.Millisecond), leader, killedAt.Round(time.Millisecond), k.atLine, k.consumed)
	if killErr != nil {
		seen += "; kill: " + killErr.Error()
	}
	seen += fmt.Sprintf("; exit %d, %d send errors reported", pexit, sendErrors)
	e.record(outcome{Tool: "kafka-console-producer", Title: fmt.Sprintf("acks=all, %d lines, SIGKILL of the leader's node", n),
		Command: prod.command, Exit: pexit, Output: e.sanitize(pout),
		Expected: "exit 0; every line acknowledged (no send error reported) although the partition leader's node was killed",
		Seen:     seen, OK: pexit == 0 && sendErrors == 0 && k.atLine >= 0 && killErr == nil && len(sent) == n, Took: time.Since(start)})

	cexit := cons.wait(2 * time.Minute)
	cout := cons.out.String()
	r := compareLines(sent, consumedLines(cout, "line-"))
	e.record(outcome{Tool: "kafka-console-consumer", Title: "--group " + group + " while the leader is killed",
		Command: cons.command, Exit: cexit, Output: e.sanitize(cout),
		Expected: fmt.Sprintf("exit 0; each of the %d lines exactly once, in order", len(sent)),
		Seen:     r.String(), OK: cexit == 0 && r.exactlyOnce(), Took: time.Since(start)})
	return sent, k, nil
}

// rejoin starts the killed node again, waits until it is back in the
// ISR of every partition, and checks that kafka-topics finds no
// under-replicated partition.
func (e *exp) rejoin(ctx context.Context, k killed) {
	fmt.Fprintf(os.Stderr, "== restarting node %d\n", k.node)
	start := time.Now()
	err := e.cluster.Node(int(k.node)).Start()
	if err == nil {
		err = e.waitFor(ctx, 90*time.Second, func(ctx context.Context, adm *kadm.Client) error {
			td, err := adm.ListTopics(ctx, failoverTopic)
			if err != nil {
				return err
			}
			for _, p := range td[failoverTopic].Partitions {
				if len(p.ISR) != 3 {
					return fmt.Errorf("%s-%d isr %v", failoverTopic, p.Partition, p.ISR)
				}
			}
			return nil
		})
	}
	title := fmt.Sprintf("--describe --under-replicated-partitions after node %d restarted", k.node)
	if err != nil {
		e.record(outcome{Tool: "kafka-topics", Title: title, Seen: fmt.Sprintf("node %d did not rejoin the ISR: %v", k.node, err)})
		return
	}
	fmt.Fprintf(os.Stderr, "   node %d back in the ISR after %s\n", k.node, time.Since(start).Round(time.Millisecond))
	e.step(ctx, title, "exit 0 and nothing printed: every partition has its full ISR",
		exitedZero(func(out string) (string, bool) {
			if t, err := parseDescribe(out); err == nil || len(t.Partitions) > 0 {
				return "listed: " + lastLine(out), false
			}
			return fmt.Sprintf("nothing listed (node %d rejoined the ISR %s after its start)", k.node,
				time.Since(start).Round(100*time.Millisecond)), true
		}), "kafka-topics", "--describe", "--under-replicated-partitions")
}
