package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// child is a server or load generator process of this same binary, spoken
// to in lines (protocol.go).
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *tailBuffer
}

// startChild runs self with args; ctx's end kills it.
func startChild(ctx context.Context, name, self string, args ...string) (*child, error) {
	cmd := exec.CommandContext(ctx, self, args...)
	c := &child{name: name, cmd: cmd, lines: make(chan string, 16), stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c, nil
}

// expect returns the rest of the next line, which must start with word.
func (c *child) expect(ctx context.Context, word string) (string, error) {
	select {
	case line, ok := <-c.lines:
		if !ok {
			return "", fmt.Errorf("%s exited waiting for %q: %s", c.name, word, c.stderr.String())
		}
		rest, found := strings.CutPrefix(line, word)
		if !found {
			return "", fmt.Errorf("%s said %q, want %q", c.name, line, word)
		}
		return strings.TrimSpace(rest), nil
	case <-ctx.Done():
		return "", fmt.Errorf("%s: waiting for %q: %w", c.name, word, ctx.Err())
	}
}

// readJSON decodes the next line into v.
func (c *child) readJSON(ctx context.Context, v any) error {
	line, err := c.expect(ctx, "{")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte("{"+line), v); err != nil {
		return fmt.Errorf("%s: bad report %q: %w", c.name, line, err)
	}
	return nil
}

// send writes one command line.
func (c *child) send(cmd string) error {
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		return fmt.Errorf("%s: send %q: %w", c.name, cmd, err)
	}
	return nil
}

// finish closes stdin (a server then shuts down) and waits for the exit.
func (c *child) finish() error {
	c.stdin.Close()
	for range c.lines { // drain so the reader goroutine ends
	}
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w: %s", c.name, err, c.stderr.String())
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}
