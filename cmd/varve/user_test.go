package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// startScramVarve starts a Varve node with a PLAINTEXT listener for
// admin and a SASL_PLAINTEXT one whose SCRAM users come from the
// metadata only; it returns both addresses.
func startScramVarve(t *testing.T) (plain, sasl string) {
	t.Helper()
	port := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	plain, sasl = port(), port()
	cfg, err := config.Parse(map[string]string{
		"log.dirs": t.TempDir(), "varve.metrics.listener": "",
		"listeners":                  "PLAINTEXT://" + plain + ",SASL_PLAINTEXT://" + sasl,
		"inter.broker.listener.name": "PLAINTEXT",
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
		"connection.failed.authentication.delay.ms":            "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		err = b.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return plain, sasl
}

func userCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "varve", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newUserCmd())
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// canLogIn reports whether user authenticates with pass over mech.
func canLogIn(t *testing.T, addr, mech, user, pass string) bool {
	auth := scram.Auth{User: user, Pass: pass}
	m := auth.AsSha256Mechanism()
	if mech == "SCRAM-SHA-512" {
		m = auth.AsSha512Mechanism()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.Ping(ctx) == nil
}

// Kafka: kafka-configs --entity-type users --alter --add-config
// 'SCRAM-SHA-256=[iterations=...,password=...]', --describe and
// --delete-config (KIP-554): the user then logs in, or no longer can.
func TestUserAddListDelete(t *testing.T) {
	plain, sasl := startScramVarve(t)
	out, err := userCLI(t, "", "user", "add", "alice", "-b", plain, "--password", "alice-pw",
		"--mechanism", "SCRAM-SHA-256,SCRAM-SHA-512", "--iterations", "8192")
	if err != nil || out != "Set SCRAM-SHA-256 credentials of user alice.\nSet SCRAM-SHA-512 credentials of user alice.\n" {
		t.Fatalf("add alice: %v\n%s", err, out)
	}
	if out, err := userCLI(t, "bob-pw\n", "user", "add", "bob", "-b", plain); err != nil {
		t.Fatalf("add bob from stdin: %v\n%s", err, out)
	}
	if _, err := userCLI(t, "", "user", "add", "carol", "-b", plain); err == nil {
		t.Fatal("a user added without a password")
	}
	if _, err := userCLI(t, "", "user", "add", "carol", "-b", plain, "--password", "x", "--mechanism", "PLAIN"); err == nil {
		t.Fatal("a PLAIN mechanism accepted")
	}
	out, err = userCLI(t, "", "user", "list", "-b", plain)
	want := "alice\tSCRAM-SHA-256=iterations=8192,SCRAM-SHA-512=iterations=8192\nbob\tSCRAM-SHA-256=iterations=4096\n"
	if err != nil || out != want {
		t.Fatalf("list: %v\n%q, want %q", err, out, want)
	}
	for _, c := range []struct{ mech, user, pass string }{
		{"SCRAM-SHA-256", "alice", "alice-pw"}, {"SCRAM-SHA-512", "alice", "alice-pw"}, {"SCRAM-SHA-256", "bob", "bob-pw"},
	} {
		if !canLogIn(t, sasl, c.mech, c.user, c.pass) {
			t.Fatalf("%s cannot log in over %s", c.user, c.mech)
		}
	}
	if canLogIn(t, sasl, "SCRAM-SHA-256", "bob", "wrong") {
		t.Fatal("a wrong password logged in")
	}
	out, err = userCLI(t, "", "user", "delete", "alice", "-b", plain)
	if err != nil || !strings.Contains(out, "Deleted SCRAM-SHA-512 credentials of user alice.") {
		t.Fatalf("delete alice: %v\n%s", err, out)
	}
	if canLogIn(t, sasl, "SCRAM-SHA-256", "alice", "alice-pw") {
		t.Fatal("a deleted user logged in")
	}
	if _, err := userCLI(t, "", "user", "delete", "alice", "-b", plain); err == nil || !strings.Contains(err.Error(), "RESOURCE_NOT_FOUND") {
		t.Fatalf("deleting a deleted user: %v", err)
	}
	if out, err := userCLI(t, "", "user", "list", "-b", plain); err != nil || out != fmt.Sprintf("bob\tSCRAM-SHA-256=iterations=%d\n", 4096) {
		t.Fatalf("list after delete: %v %q", err, out)
	}
}
