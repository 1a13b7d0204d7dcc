package cluster_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kcat (librdkafka) with the client settings of a secured Kafka:
// security.protocol SSL with a client certificate, SASL_SSL with
// SCRAM-SHA-512, SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256; it
// produces and consumes, and a wrong password gets no data.
func TestKcatSecuredListeners(t *testing.T) {
	kcat := kcatPath(t)
	n := startSecuredNode(t, nil)
	ca := filepath.Join(n.dir, "ca.pem")
	for _, c := range []struct {
		name, listener string
		x              []string
	}{
		{"ssl", "SSL", []string{"security.protocol=SSL", "ssl.ca.location=" + ca,
			"ssl.certificate.location=" + filepath.Join(n.dir, "client.pem"), "ssl.key.location=" + filepath.Join(n.dir, "client.key")}},
		{"sasl-ssl-scram-512", "SASL_SSL", []string{"security.protocol=SASL_SSL", "ssl.ca.location=" + ca,
			"sasl.mechanisms=SCRAM-SHA-512", "sasl.username=alice", "sasl.password=alice-secret"}},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", []string{"security.protocol=SASL_PLAINTEXT",
			"sasl.mechanisms=PLAIN", "sasl.username=bob", "sasl.password=bob-secret"}},
		{"sasl-plaintext-scram-256", "SASL_PLAINTEXT", []string{"security.protocol=SASL_PLAINTEXT",
			"sasl.mechanisms=SCRAM-SHA-256", "sasl.username=alice", "sasl.password=alice-secret"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			topic := "kcat-" + c.name
			args := []string{"-b", n.addrs[c.listener], "-t", topic}
			for _, x := range c.x {
				args = append(args, "-X", x)
			}
			runKcat(t, kcat, []byte("one\ntwo\nthree\n"), append(args, "-P")...)
			out := runKcat(t, kcat, nil, append(args, "-C", "-e", "-o", "beginning")...)
			if got := strings.Fields(string(out)); strings.Join(got, ",") != "one,two,three" {
				t.Fatalf("consumed %q", out)
			}
		})
	}
	t.Run("wrong-password", func(t *testing.T) {
		cmd := exec.Command(kcat, "-b", n.addrs["SASL_SSL"], "-t", "kcat-sasl-ssl-scram-512", "-C", "-e", "-o", "beginning",
			"-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location="+ca, "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=alice", "-X", "sasl.password=wrong", "-m", "5")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil || len(out) > 0 {
			t.Fatalf("kcat with a wrong password: err %v, output %q", err, out)
		}
		if !strings.Contains(stderr.String(), "Authentication failed") {
			t.Fatalf("kcat did not report the failed authentication:\n%s", stderr.String())
		}
	})
}
