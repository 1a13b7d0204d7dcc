package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/varve/varve/config"
)

// Certificate reload without restart, as Kafka's dynamic update of
// ssl.keystore.* and ssl.truststore.* (KIP-226) lets an operator rotate
// a listener's certificate: when the files named by
// ssl.keystore.location or ssl.truststore.location change, the next
// handshakes use what they now hold. A tlsStore checks the files' size
// and modification time at most once every tlsReloadEvery, on a
// handshake (no goroutine of its own); a change is read and validated
// whole (the key matches the certificate, the trust store holds a
// certificate) before it replaces the material in use, atomically.
// Connections already made keep the certificate they were made with.
// A file that does not load is logged and the material in use kept; it
// is read again when it changes again. Inline certificates
// (ssl.keystore.key, ssl.truststore.certificates) change only with the
// configuration.

// tlsReloadEvery bounds how often a store looks at its files, in
// nanoseconds (a second; tests shorten it).
var tlsReloadEvery atomic.Int64

func init() { tlsReloadEvery.Store(int64(time.Second)) }

// tlsStore is one side (server or client) of a listener's TLS settings
// with the key store and trust store they name, reloaded when the files
// change. Safe for concurrent use.
type tlsStore struct {
	sec      config.ListenerSecurity
	log      *slog.Logger
	base     *tls.Config // versions, suites, client authentication: what files do not hold
	needCert bool        // a server must have a key store; a client may not
	verify   atomic.Pointer[func(tls.ConnectionState) error]

	cur       atomic.Pointer[tlsMaterial]
	nextCheck atomic.Int64 // unix nanoseconds
	mu        sync.Mutex   // one reload at a time
}

// tlsMaterial is what the files held when last loaded.
type tlsMaterial struct {
	cert   *tls.Certificate // nil: a client without a key store
	roots  *x509.CertPool   // nil: the system's
	stamps [2]fileStamp     // key store, trust store
	server *tls.Config      // a server's configuration for handshakes
}

// fileStamp tells a file's versions apart: a file replaced by a rename
// (how certificates are rotated safely, and how a Kubernetes secret's
// symlink moves) has a new inode even when its size and modification
// time, which the kernel keeps at a clock tick's precision, are the old
// one's.
type fileStamp struct {
	size    int64
	modTime time.Time
	dev     uint64
	ino     uint64
}

func stampOf(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	st := fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), sys.Ino
	}
	return st
}

// newTLSStore loads the store's files; an error stops start-up.
func newTLSStore(s config.ListenerSecurity, base *tls.Config, needCert bool, log *slog.Logger) (*tlsStore, error) {
	st := &tlsStore{sec: s, base: base, needCert: needCert, log: log}
	m, err := st.load()
	if err != nil {
		return nil, err
	}
	st.cur.Store(m)
	st.nextCheck.Store(time.Now().UnixNano() + tlsReloadEvery.Load())
	return st, nil
}

// load reads the key store and trust store.
func (st *tlsStore) load() (*tlsMaterial, error) {
	m := &tlsMaterial{stamps: [2]fileStamp{stampOf(st.sec.KeystoreLocation), stampOf(st.sec.TruststoreLocation)}}
	if st.needCert || st.sec.KeystoreLocation != "" || st.sec.KeystoreKey != "" || st.sec.KeystoreCertificateChain != "" {
		cert, err := keyStore(st.sec)
		if err != nil {
			return nil, err
		}
		m.cert = &cert
	}
	roots, err := trustStore(st.sec)
	if err != nil {
		return nil, err
	}
	m.roots = roots
	if st.needCert {
		m.server = st.base.Clone()
		m.server.Certificates, m.server.ClientCAs = []tls.Certificate{*m.cert}, roots
		m.server.VerifyConnection = st.verifyConnection
	}
	return m, nil
}

// current is the material to use now, reloaded first if the files
// changed since it was loaded.
func (st *tlsStore) current() *tlsMaterial {
	now := time.Now().UnixNano()
	if next := st.nextCheck.Load(); now < next || !st.nextCheck.CompareAndSwap(next, now+tlsReloadEvery.Load()) {
		return st.cur.Load()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	old := st.cur.Load()
	stamps := [2]fileStamp{stampOf(st.sec.KeystoreLocation), stampOf(st.sec.TruststoreLocation)}
	if stamps == old.stamps {
		return old
	}
	m, err := st.load()
	if err != nil {
		st.log.Error("TLS key store or trust store changed but does not load: the certificates in use are kept",
			"keystore", st.sec.KeystoreLocation, "truststore", st.sec.TruststoreLocation, "err", err)
		kept := *old
		kept.stamps = stamps // read again when the files change again
		st.cur.Store(&kept)
		return &kept
	}
	st.log.Info("TLS key store or trust store reloaded", "keystore", st.sec.KeystoreLocation, "truststore", st.sec.TruststoreLocation)
	st.cur.Store(m)
	return m
}

// serverConfig is tls.Config.GetConfigForClient: each handshake takes
// the material current when it starts.
func (st *tlsStore) serverConfig(*tls.ClientHelloInfo) (*tls.Config, error) {
	return st.current().server, nil
}

func (st *tlsStore) verifyConnection(cs tls.ConnectionState) error {
	if v := st.verify.Load(); v != nil {
		return (*v)(cs)
	}
	return nil
}

// setVerify adds a check of every handshake the store serves.
func (st *tlsStore) setVerify(f func(tls.ConnectionState) error) { st.verify.Store(&f) }
