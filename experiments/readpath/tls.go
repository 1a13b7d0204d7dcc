package main

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/internal/testcert"
)

// tlsSetup is the ssl path's TLS: a certificate authority and a server
// certificate for 127.0.0.1 made in memory when the first ssl run
// starts, and crypto/tls's defaults (TLS 1.3; AES-GCM where the CPU has
// AES instructions), as a broker's SSL listener with Kafka's defaults
// negotiates with a modern client.
type tlsSetup struct {
	server   *tls.Config
	rootsPEM []byte
	suite    uint16 // agreed by the last ssl run's connections
}

func (t *tlsSetup) setUp() error {
	if t.server != nil {
		return nil
	}
	ca, err := testcert.NewCA("readpath CA")
	if err != nil {
		return err
	}
	leaf, err := ca.Server(pkix.Name{CommonName: "readpath"})
	if err != nil {
		return err
	}
	t.server, t.rootsPEM = &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}, ca.PEM
	return nil
}

// suiteName names the agreed cipher suite, "" before any ssl run.
func (t *tlsSetup) suiteName() string {
	if t.suite == 0 {
		return ""
	}
	return tls.CipherSuiteName(t.suite)
}

// ktlsProbe is what this kernel said about kernel TLS (kTLS), which
// would let sendfile(2) keep working on a TLS connection: after the
// handshake in user space, the socket gets the "tls" upper-layer
// protocol (setsockopt TCP_ULP) and the session's keys (TLS_TX), and the
// kernel encrypts what is written or sent to it.
type ktlsProbe struct {
	available string // /proc/sys/net/ipv4/tcp_available_ulp
	ulpErr    error  // setsockopt(TCP_ULP, "tls") on a connected socket; nil: accepted
	probeErr  error  // the probe itself could not run
}

// ok reports whether the kernel accepted the tls ULP.
func (p ktlsProbe) ok() bool { return p.probeErr == nil && p.ulpErr == nil }

// probeKTLS reads the available ULPs and asks for "tls" on a connected
// loopback socket (the kernel accepts TCP_ULP only on an established
// connection, and loads the tls module on demand if it can).
func probeKTLS() ktlsProbe {
	var p ktlsProbe
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_ulp"); err == nil {
		p.available = strings.TrimSpace(string(b))
	} else {
		p.available = "(unreadable: " + err.Error() + ")"
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		p.probeErr = err
		return p
	}
	defer ln.Close()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		p.probeErr = err
		return p
	}
	defer c.Close()
	if s, err := ln.Accept(); err == nil {
		defer s.Close()
	}
	rc, err := c.SyscallConn()
	if err != nil {
		p.probeErr = err
		return p
	}
	if err := rc.Control(func(fd uintptr) { p.ulpErr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_ULP, "tls") }); err != nil {
		p.probeErr = err
	}
	return p
}

// String says what the probe found, for summary.md.
func (p ktlsProbe) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "`/proc/sys/net/ipv4/tcp_available_ulp`: `%s`; ", p.available)
	switch {
	case p.probeErr != nil:
		fmt.Fprintf(&b, "the setsockopt probe could not run: %v", p.probeErr)
	case p.ulpErr == nil:
		b.WriteString("`setsockopt(TCP_ULP, \"tls\")` on a connected loopback socket: accepted")
	default:
		fmt.Fprintf(&b, "`setsockopt(TCP_ULP, \"tls\")` on a connected loopback socket: %s", errnoName(p.ulpErr))
	}
	return b.String()
}

func errnoName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		return fmt.Sprintf("%s (%v)", unix.ErrnoName(en), err)
	}
	return err.Error()
}
