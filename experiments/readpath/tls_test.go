package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The ssl path runs over TLS from the consumers' first byte: a run
// delivers verified bytes, the summary compares it with the plaintext
// paths and names the agreed suite, and a consumer that does not speak
// TLS fails the run.
func TestSSLPath(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.paths = []string{pathSendfile, pathReadWrite, pathSSL}
	cfg.inproc = true
	dir, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## SSL against PLAINTEXT", "TLS_AES_", "| tail | 3 |", "tcp_available_ulp"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}

	e := &experiment{cfg: cfg, progress: newProgress(io.Discard, 0, false)}
	ds, err := writeDataset(t.TempDir(), cfg.catchupBytes, cfg.segmentBytes, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	e.ds = ds
	if err := e.tls.setUp(); err != nil {
		t.Fatal(err)
	}
	ln, err := listen()
	if err != nil {
		t.Fatal(err)
	}
	s := &session{ln: ln, tls: e.tls.server, streams: ds.streams(0, ds.total, 1, 1, true), fetch: cfg.fetchBytes}
	defer s.close()
	wait, err := startConsumers(consumerSpec{Addr: ln.Addr().String(), Fetch: cfg.fetchBytes, Totals: []int64{ds.total}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.accept(time.Now().Add(time.Second)); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("a plaintext consumer on the ssl path: %v", err)
	}
	s.close()
	wait()
}

// The probe reports the kernel's list of upper-layer protocols; when
// the kernel accepts the tls ULP, the list names it.
func TestKTLSProbe(t *testing.T) {
	p := probeKTLS()
	if p.probeErr != nil {
		t.Fatal(p.probeErr)
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_ulp")
	if err != nil {
		t.Skip(err)
	}
	if p.ok() && !strings.Contains(string(b), "tls") {
		t.Errorf("the tls ULP was accepted but is not listed: %q", b)
	}
	if !strings.Contains(p.String(), strings.TrimSpace(string(b))) {
		t.Errorf("the report %q does not quote the list %q", p.String(), b)
	}
}
