package cluster_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/varve/varve/internal/testcert"
)

// securedCluster is a quorumCluster whose every listener is secured, and
// the client options that reach its broker listeners.
type securedCluster struct {
	*quorumCluster
	opts []kgo.Opt
	tls  *tls.Config // the clients' TLS settings
}

// nodeKeystores writes one PEM key store per node, signed by the CA
// ca(i) picks, and the trust store of good, into dir.
func nodeKeystores(t *testing.T, dir string, n int, good *testcert.CA, ca func(i int) *testcert.CA) (keystores []string, truststore string) {
	t.Helper()
	truststore = filepath.Join(dir, "ca.pem")
	writeFile(t, truststore, good.PEM)
	for i := range n {
		leaf, err := ca(i).Node(pkix.Name{CommonName: fmt.Sprintf("node-%d", i+1), Organization: []string{"varve"}})
		if err != nil {
			t.Fatal(err)
		}
		ks := filepath.Join(dir, fmt.Sprintf("node-%d.pem", i+1))
		writeFile(t, ks, append(append([]byte{}, leaf.KeyPEM...), leaf.CertPEM...))
		keystores = append(keystores, ks)
	}
	return keystores, truststore
}

// startMutualTLSCluster starts three nodes whose broker listener (SSL,
// also the inter-broker listener) and controller listener both require
// client certificates from the test's CA; node i's certificate is
// signed by ca(i).
func startMutualTLSCluster(t *testing.T, good *testcert.CA, ca func(i int) *testcert.CA) *securedCluster {
	dir := t.TempDir()
	keystores, truststore := nodeKeystores(t, dir, 3, good, ca)
	common := map[string]string{
		"inter.broker.listener.name":     "SSL",
		"listener.security.protocol.map": "SSL:SSL,CONTROLLER:SSL",
		"ssl.keystore.type":              "PEM",
		"ssl.truststore.type":            "PEM",
		"ssl.truststore.location":        truststore,
		"ssl.client.auth":                "required",
	}
	tc := startQuorumClusterWith(t, 3, common, func(i int, props map[string]string) {
		props["listeners"] = strings.ReplaceAll(props["listeners"], "PLAINTEXT://", "SSL://")
		props["ssl.keystore.location"] = keystores[i]
	})
	cl, err := good.Client(pkix.Name{CommonName: "client"})
	if err != nil {
		t.Fatal(err)
	}
	tlsc := &tls.Config{RootCAs: good.Pool(), Certificates: []tls.Certificate{cl.TLS}}
	return &securedCluster{quorumCluster: tc, opts: []kgo.Opt{kgo.DialTLSConfig(tlsc)}, tls: tlsc}
}

func (sc *securedCluster) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	return client(t, sc.bootstrap()[0], append(append([]kgo.Opt{}, sc.opts...), opts...)...)
}

// brokers lists the brokers Metadata names, asked of a fresh client (kgo
// answers from its cache while it is young).
func (sc *securedCluster) brokers(t *testing.T) []int32 {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(sc.bootstrap()[0])}, sc.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	m, err := kadm.NewClient(cl).BrokerMetadata(ctx(t))
	if err != nil {
		return nil
	}
	return m.Brokers.NodeIDs()
}

func (sc *securedCluster) waitBrokers(t *testing.T, n int) {
	t.Helper()
	waitWithin(t, 30*time.Second, fmt.Sprintf("%d brokers registered", n), func() bool { return len(sc.brokers(t)) == n })
}

// controllerAddr is node i's controller listener.
func (sc *securedCluster) controllerAddr(i int) string {
	return strings.Split(sc.props[i]["controller.quorum.voters"], ",")[i][len(fmt.Sprint(i+1))+1:]
}

// controllerApiKeys asks a controller listener for its ApiVersions (v0,
// before any authentication) over TLS and returns each key's highest
// version.
func controllerApiKeys(t *testing.T, addr string, cfg *tls.Config) map[int16]int16 {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil || len(body) < 4 {
		t.Fatalf("ApiVersions answer: %v", err)
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	out := map[int16]int16{}
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = k.MaxVersion
	}
	return out
}

// replicateAndFailOver creates a topic replicated on the three nodes,
// produces with acks=all, waits for the full ISR (the followers fetch
// over the inter-broker listener), kills the leader's node, produces
// again through the new leader and reads everything back.
func (sc *securedCluster) replicateAndFailOver(t *testing.T) {
	t.Helper()
	adm := kadm.NewClient(sc.client(t))
	resp, err := adm.CreateTopic(ctx(t), 1, 3, nil, "rf3")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	prod := sc.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("rf3"),
		kgo.RecordRetries(1000), kgo.RetryTimeout(60*time.Second))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx(t), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	}
	partition := func() (leader int32, isr int) {
		m, err := adm.Metadata(ctx(t), "rf3")
		if err != nil {
			return -1, 0
		}
		p := m.Topics["rf3"].Partitions[0]
		return p.Leader, len(p.ISR)
	}
	produce(0, 100)
	waitWithin(t, 30*time.Second, "all three replicas in the ISR", func() bool { _, n := partition(); return n == 3 })
	old, _ := partition()
	sc.kill(int(old) - 1)
	adm = kadm.NewClient(sc.client(t))
	produce(100, 200)
	if l, _ := partition(); l == old || l < 0 {
		t.Fatalf("leader after the kill: %d (was %d)", l, old)
	}
	cons := sc.client(t, kgo.ConsumeTopics("rf3"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for cx, n := ctx(t), 0; n < 200; {
		fs := cons.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %d of 200 records before the deadline", n)
		}
		for _, r := range fs.Records() {
			seen[string(r.Value)]++
			n++
		}
	}
	for i := range 200 {
		if seen[fmt.Sprint(i)] != 1 {
			t.Errorf("record %d seen %d times", i, seen[fmt.Sprint(i)])
		}
	}
}

// Kafka: inter-broker and controller traffic on SSL listeners
// (security.inter.broker.protocol / inter.broker.listener.name and
// controller.listener.names mapped to SSL), each node presenting its key
// store as its client certificate (ssl.client.auth=required): the quorum
// forms, the brokers register, followers replicate, and a leader's loss
// fails over, all over mutual TLS.
func TestThreeNodesMutualTLS(t *testing.T) {
	ca, err := testcert.NewCA("varve cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	sc := startMutualTLSCluster(t, ca, func(int) *testcert.CA { return ca })
	sc.waitBrokers(t, 3)
	// The controller listener speaks TLS only: a plaintext request is
	// never answered.
	raw := dialRaw(t, sc.controllerAddr(0))
	raw.send(t, kmsg.NewPtrApiVersionsRequest())
	raw.expectClosedSilently(t, "a plaintext ApiVersions on the TLS controller listener")
	sc.replicateAndFailOver(t)
}

// Kafka: a node whose certificate the others do not trust cannot take
// part: its TLS handshakes with the other controllers and brokers fail
// both ways, so it never registers, while the two trusted nodes form a
// quorum and serve.
func TestThreeNodesUntrustedNodeCannotJoin(t *testing.T) {
	good, err := testcert.NewCA("varve cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := testcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	sc := startMutualTLSCluster(t, good, func(i int) *testcert.CA {
		if i == 2 {
			return rogue
		}
		return good
	})
	sc.waitBrokers(t, 2)
	// Several heartbeat intervals and election timeouts later, node 3 is
	// still not a broker of the cluster, and has learnt nothing of it.
	time.Sleep(3 * time.Second)
	if got := sc.brokers(t); len(got) != 2 || got[0] == 3 || got[1] == 3 {
		t.Fatalf("brokers %v, want 1 and 2 only", got)
	}
	if dump := sc.nodes[2].MetadataDump(); strings.Contains(dump, "rf3") || strings.Contains(dump, "127.0.0.1") {
		t.Fatalf("the untrusted node received the cluster's metadata:\n%s", dump)
	}
}

const (
	jaasBrokerScram     = `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="%s" user_broker="broker-secret" user_app="app-secret";`
	jaasControllerPlain = `org.apache.kafka.common.security.plain.PlainLoginModule required username="controller" password="%s" user_controller="controller-secret";`
)

// startSaslCluster starts three nodes with SASL_SSL broker and
// controller listeners (server certificates only): the brokers
// authenticate to each other with SCRAM-SHA-512, to the controllers with
// PLAIN. Node i authenticates with password(i).
func startSaslCluster(t *testing.T, password func(i int) (broker, controller string)) *securedCluster {
	ca, err := testcert.NewCA("varve cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	keystores, truststore := nodeKeystores(t, t.TempDir(), 3, ca, func(int) *testcert.CA { return ca })
	common := map[string]string{
		"inter.broker.listener.name":                       "SASL_SSL",
		"listener.security.protocol.map":                   "SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL",
		"ssl.keystore.type":                                "PEM",
		"ssl.truststore.type":                              "PEM",
		"ssl.truststore.location":                          truststore,
		"sasl.mechanism.inter.broker.protocol":             "SCRAM-SHA-512",
		"sasl.mechanism.controller.protocol":               "PLAIN",
		"listener.name.sasl_ssl.sasl.enabled.mechanisms":   "SCRAM-SHA-512",
		"listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
	}
	tc := startQuorumClusterWith(t, 3, common, func(i int, props map[string]string) {
		props["listeners"] = strings.ReplaceAll(props["listeners"], "PLAINTEXT://", "SASL_SSL://")
		props["ssl.keystore.location"] = keystores[i]
		bpw, cpw := password(i)
		props["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] = fmt.Sprintf(jaasBrokerScram, bpw)
		props["listener.name.controller.plain.sasl.jaas.config"] = fmt.Sprintf(jaasControllerPlain, cpw)
	})
	mech := scram.Auth{User: "app", Pass: "app-secret"}.AsSha512Mechanism()
	tlsc := &tls.Config{RootCAs: ca.Pool()}
	return &securedCluster{quorumCluster: tc, opts: []kgo.Opt{kgo.DialTLSConfig(tlsc), kgo.SASL(mech)}, tls: tlsc}
}

// Kafka: SASL_SSL inter-broker and controller listeners, the nodes
// authenticating with sasl.mechanism.inter.broker.protocol and
// sasl.mechanism.controller.protocol as the username and password of
// their listener's JAAS configuration: replication and failover work.
func TestThreeNodesSaslSSL(t *testing.T) {
	sc := startSaslCluster(t, func(int) (string, string) { return "broker-secret", "controller-secret" })
	sc.waitBrokers(t, 3)
	// A SASL client of the controller listener finds SaslHandshake and
	// SaslAuthenticate in its ApiVersions, as on a Kafka controller.
	keys := controllerApiKeys(t, sc.controllerAddr(0), sc.tls)
	if keys[kmsg.SASLHandshake.Int16()] != 1 || keys[kmsg.SASLAuthenticate.Int16()] != 2 {
		t.Errorf("the controller listener's ApiVersions: SaslHandshake up to v%d, SaslAuthenticate up to v%d; want 1 and 2",
			keys[kmsg.SASLHandshake.Int16()], keys[kmsg.SASLAuthenticate.Int16()])
	}
	sc.replicateAndFailOver(t)
}

// Kafka: a node with the wrong controller password is refused by the
// others' controller listeners (SASL_AUTHENTICATION_FAILED): it cannot
// register as a broker.
func TestThreeNodesWrongControllerPasswordCannotRegister(t *testing.T) {
	sc := startSaslCluster(t, func(i int) (string, string) {
		if i == 2 {
			return "broker-secret", "wrong"
		}
		return "broker-secret", "controller-secret"
	})
	sc.waitBrokers(t, 2)
	time.Sleep(3 * time.Second)
	if got := sc.brokers(t); len(got) != 2 || got[0] == 3 || got[1] == 3 {
		t.Fatalf("brokers %v, want 1 and 2 only", got)
	}
}
