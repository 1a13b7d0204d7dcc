package kafkamigrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/varve/varve/experiments/internal/kafkadist"
)

const kafkaVersion = "4.4.0"

// kafkaNode is a running single-node KRaft Kafka.
type kafkaNode struct {
	cmd  *exec.Cmd
	addr string
	data string // log.dirs (and the metadata log)
	out  string // its console output
}

// startKafka assembles Kafka (skipping the test when that is impossible
// outside CI), formats a node whose log dir is dir/data and starts it.
func startKafka(t *testing.T, dir string) *kafkaNode {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Apache Kafka: not under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	libs, err := kafkadist.Assemble(ctx, kafkadist.DefaultCacheDir(), kafkaVersion)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("assemble Kafka %s: %v", kafkaVersion, err)
		}
		t.Skipf("Kafka %s cannot be assembled here (java and mvn with network needed; CI must have them): %v", kafkaVersion, err)
	}
	broker, controller := freePort(t), freePort(t)
	k := &kafkaNode{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(broker)), data: filepath.Join(dir, "data"), out: filepath.Join(dir, "kafka.out")}
	props := filepath.Join(dir, "server.properties")
	text := kafkadist.FormatProps("experiments/kafkamigrate", map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          "1",
		"controller.quorum.voters":                         fmt.Sprintf("1@127.0.0.1:%d", controller),
		"listeners":                                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", broker, controller),
		"advertised.listeners":                             "PLAINTEXT://" + k.addr,
		"controller.listener.names":                        "CONTROLLER",
		"inter.broker.listener.name":                       "PLAINTEXT",
		"listener.security.protocol.map":                   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                                         k.data,
		"offsets.topic.replication.factor":                 "1",
		"offsets.topic.num.partitions":                     "3",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"transaction.state.log.num.partitions":             "2",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
	})
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := kafkadist.NewClusterID()
	if err != nil {
		t.Fatal(err)
	}
	if err := kafkadist.Format(ctx, libs, id, props); err != nil {
		t.Fatal(err)
	}
	argv := kafkadist.ServerCommand(libs, "512m", filepath.Join(dir, "logs"), props)
	out, err := os.Create(k.out)
	if err != nil {
		t.Fatal(err)
	}
	k.cmd = exec.Command(argv[0], argv[1:]...)
	k.cmd.Stdout, k.cmd.Stderr = out, out
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if k.cmd.ProcessState == nil {
			k.cmd.Process.Kill()
			k.cmd.Wait()
		}
		out.Close()
	})
	return k
}

// stop stops Kafka with SIGTERM (a clean shutdown) and waits for it.
func (k *kafkaNode) stop(t *testing.T) {
	t.Helper()
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- k.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		k.cmd.Process.Kill()
		t.Fatalf("Kafka did not stop within 2 minutes; see %s", k.out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
