package cluster_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// scramNodeProps are a node with a PLAINTEXT listener for admin and a
// SASL_PLAINTEXT one whose SCRAM users live in the metadata only (no
// JAAS users), on fixed ports so that it restarts where it was.
func scramNodeProps(t *testing.T) (props map[string]string, plain, sasl string) {
	plain = fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	sasl = fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	return map[string]string{
		"listeners":                  "PLAINTEXT://" + plain + ",SASL_PLAINTEXT://" + sasl,
		"inter.broker.listener.name": "PLAINTEXT",
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
		"connection.failed.authentication.delay.ms":            "100",
	}, plain, sasl
}

// scramProduce produces one record as user over SCRAM and returns the
// error.
func scramProduce(t *testing.T, addr string, mech sasl512, user, pass string) error {
	t.Helper()
	auth := scram.Auth{User: user, Pass: pass}
	m := auth.AsSha256Mechanism()
	if mech {
		m = auth.AsSha512Mechanism()
	}
	cl := client(t, addr, kgo.SASL(m), kgo.AllowAutoTopicCreation(), kgo.RequestRetries(0),
		kgo.RetryTimeout(2*time.Second), kgo.RecordDeliveryTimeout(5*time.Second))
	if err := cl.Ping(ctx(t)); err != nil {
		return err // authentication failed: nothing to produce with
	}
	return cl.ProduceSync(ctx(t), &kgo.Record{Topic: "scram-users", Value: []byte(user)}).FirstErr()
}

type sasl512 bool

// Kafka: KIP-554. kafka-configs --alter --add-config
// 'SCRAM-SHA-256=[password=...]' --entity-type users sends
// AlterUserScramCredentials with a password the client salted; the user
// then authenticates with it, DescribeUserScramCredentials lists the
// mechanism and iterations, the credential survives a restart (it is in
// the metadata), and a deleted credential no longer authenticates.
func TestScramCredentialsInMetadata(t *testing.T) {
	props, plainAddr, saslAddr := scramNodeProps(t)
	dir := t.TempDir()
	node := startBroker(t, dir, props)
	adm := kadm.NewClient(client(t, plainAddr))
	if err := scramProduce(t, saslAddr, false, "dave", "dave-pw"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("an unknown user produced: %v", err)
	}
	altered, err := adm.AlterUserSCRAMs(ctx(t), nil, []kadm.UpsertSCRAM{
		{User: "dave", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "dave-pw"},
		{User: "erin", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "erin-pw"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if altered["dave"].Err != nil || altered["erin"].Err != nil {
		t.Fatalf("altered %+v", altered)
	}
	// kadm refuses too few iterations itself: as kafka-configs would
	// send them.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, u := range []struct {
		name  string
		iters int32
	}{{"few", 1000}, {"twice", 4096}, {"twice", 4096}} {
		up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = u.name, 1, u.iters, []byte("salt"), make([]byte, 32)
		req.Upsertions = append(req.Upsertions, up)
	}
	resp, err := req.RequestWith(ctx(t), client(t, plainAddr))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 2 || resp.Results[0].ErrorCode != kerr.UnacceptableCredential.Code ||
		resp.Results[1].ErrorCode != kerr.DuplicateResource.Code {
		t.Fatalf("answers %+v", resp.Results)
	}
	described, err := adm.DescribeUserSCRAMs(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if d := described["erin"]; len(described) != 2 || d.Err != nil || len(d.CredInfos) != 1 ||
		d.CredInfos[0].Mechanism != kadm.ScramSha512 || d.CredInfos[0].Iterations != 8192 {
		t.Fatalf("described %+v", described)
	}
	if err := scramProduce(t, saslAddr, false, "dave", "dave-pw"); err != nil {
		t.Fatalf("dave over SCRAM-SHA-256: %v", err)
	}
	if err := scramProduce(t, saslAddr, true, "erin", "erin-pw"); err != nil {
		t.Fatalf("erin over SCRAM-SHA-512: %v", err)
	}
	for _, bad := range []struct {
		user, pass string
		mech       sasl512
	}{{"dave", "wrong", false}, {"dave", "dave-pw", true}, {"erin", "erin-pw", false}} {
		if err := scramProduce(t, saslAddr, bad.mech, bad.user, bad.pass); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%+v authenticated: %v", bad, err)
		}
	}

	node.stop(t)
	node = startBroker(t, dir, props)
	if err := scramProduce(t, saslAddr, false, "dave", "dave-pw"); err != nil {
		t.Fatalf("dave after a restart: %v", err)
	}
	adm = kadm.NewClient(client(t, plainAddr))
	altered, err = adm.AlterUserSCRAMs(ctx(t), []kadm.DeleteSCRAM{{User: "dave", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || altered["dave"].Err != nil {
		t.Fatalf("delete dave: %v %+v", err, altered)
	}
	if err := scramProduce(t, saslAddr, false, "dave", "dave-pw"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a deleted credential authenticated: %v", err)
	}
	altered, _ = adm.AlterUserSCRAMs(ctx(t), []kadm.DeleteSCRAM{{User: "dave", Mechanism: kadm.ScramSha256}}, nil)
	if !errors.Is(altered["dave"].Err, kerr.ResourceNotFound) {
		t.Fatalf("deleting a missing credential: %+v", altered)
	}
	described, _ = adm.DescribeUserSCRAMs(ctx(t), "dave", "erin")
	if !errors.Is(described["dave"].Err, kerr.ResourceNotFound) || described["erin"].Err != nil {
		t.Fatalf("described %+v", described)
	}
}

// Kafka: KIP-590 and KIP-554 in a KRaft cluster. Any broker takes
// AlterUserScramCredentials and forwards it to the active controller,
// which writes the records; every broker then authenticates the user
// from its own metadata image, and a deletion reaches them all.
func TestScramCredentialsInQuorum(t *testing.T) {
	saslAddrs := make([]string, 3)
	tc := startQuorumClusterWith(t, 3, map[string]string{
		"listener.security.protocol.map":                       "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-512",
		"connection.failed.authentication.delay.ms":            "100",
	}, func(i int, props map[string]string) {
		saslAddrs[i] = fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
		props["listeners"] += ",SASL_PLAINTEXT://" + saslAddrs[i]
	})
	adm := kadm.NewClient(client(t, tc.addrs[1]))
	altered, err := adm.AlterUserSCRAMs(ctx(t), nil, []kadm.UpsertSCRAM{
		{User: "frank", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "frank-pw"}})
	if err != nil || altered["frank"].Err != nil {
		t.Fatalf("alter: %v %+v", err, altered)
	}
	for i, addr := range saslAddrs {
		waitWithin(t, 10*time.Second, fmt.Sprintf("frank on node %d", i+1), func() bool {
			return scramProduce(t, addr, true, "frank", "frank-pw") == nil
		})
	}
	described, err := kadm.NewClient(client(t, tc.addrs[2])).DescribeUserSCRAMs(ctx(t), "frank")
	if err != nil || described["frank"].Err != nil || len(described["frank"].CredInfos) != 1 {
		t.Fatalf("describe on node 3: %v %+v", err, described)
	}
	altered, err = adm.AlterUserSCRAMs(ctx(t), []kadm.DeleteSCRAM{{User: "frank", Mechanism: kadm.ScramSha512}}, nil)
	if err != nil || altered["frank"].Err != nil {
		t.Fatalf("delete: %v %+v", err, altered)
	}
	for i, addr := range saslAddrs {
		waitWithin(t, 10*time.Second, fmt.Sprintf("frank refused on node %d", i+1), func() bool {
			return errors.Is(scramProduce(t, addr, true, "frank", "frank-pw"), kerr.SaslAuthenticationFailed)
		})
	}
	altered, _ = adm.AlterUserSCRAMs(ctx(t), nil, []kadm.UpsertSCRAM{
		{User: "frank", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "a"},
		{User: "frank", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "b"}})
	if !errors.Is(altered["frank"].Err, kerr.DuplicateResource) {
		t.Fatalf("a user altered twice in one request: %+v", altered)
	}
}
