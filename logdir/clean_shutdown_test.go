package logdir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// withBrokerEpoch makes the manager write epoch into its markers.
func withBrokerEpoch(epoch int64) testConfig {
	return func(c *logdir.Config) { c.BrokerEpoch = func() int64 { return epoch } }
}

// Kafka: LogManager.shutdown(brokerEpoch) writes the broker's epoch into
// each log dir's .kafka_cleanshutdown, and at the next start
// readBrokerEpochFromCleanShutdownFiles reads it back for the broker's
// registration (KIP-966's PreviousBrokerEpoch): the epoch when every log
// dir's marker holds the same one, -1 when a marker is missing, holds
// none or disagrees. The marker alone makes the load clean, whatever its
// epoch.
func TestCleanShutdownMarkerCarriesTheBrokerEpoch(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	m := openManager(t, []string{a, b}, withBrokerEpoch(57))
	if _, err := m.Create(tp("t", 0), logdir.TopicID{1}); err != nil {
		t.Fatal(err)
	}
	if got := m.PreviousBrokerEpoch(); got != -1 {
		t.Errorf("fresh directories: previous epoch %d, want -1", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{a, b} {
		data, err := os.ReadFile(filepath.Join(d, segment.CleanShutdownFile))
		if err != nil || string(data) != `{"version":0,"brokerEpoch":57}` {
			t.Fatalf("%s: marker %q, %v", d, data, err)
		}
	}
	m = openManager(t, []string{a, b})
	if got := m.PreviousBrokerEpoch(); got != 57 {
		t.Errorf("after a clean shutdown at epoch 57: previous epoch %d", got)
	}
	pl, _ := m.Get(tp("t", 0))
	if !pl.Log.Recovery().CleanShutdown {
		t.Errorf("the marker did not make the load clean")
	}
	if _, err := os.Stat(filepath.Join(a, segment.CleanShutdownFile)); !os.IsNotExist(err) {
		t.Errorf("marker still there after start: %v", err)
	}
	if err := m.Close(); err != nil { // no BrokerEpoch: -1
		t.Fatal(err)
	}
	if m = openManager(t, []string{a, b}); m.PreviousBrokerEpoch() != -1 {
		t.Errorf("markers without an epoch: previous epoch %d, want -1", m.PreviousBrokerEpoch())
	}
	m.Close()

	for name, markers := range map[string][2]string{
		"epochs differ":      {`{"version":0,"brokerEpoch":57}`, `{"version":0,"brokerEpoch":58}`},
		"one marker missing": {`{"version":0,"brokerEpoch":57}`, ""},
		"pre-3.5 empty":      {`{"version":0,"brokerEpoch":57}`, "-"},
	} {
		for i, d := range []string{a, b} {
			path := filepath.Join(d, segment.CleanShutdownFile)
			os.Remove(path)
			switch markers[i] {
			case "":
			case "-":
				os.WriteFile(path, nil, 0o644)
			default:
				os.WriteFile(path, []byte(markers[i]), 0o644)
			}
		}
		m := openManager(t, []string{a, b})
		if got := m.PreviousBrokerEpoch(); got != -1 {
			t.Errorf("%s: previous epoch %d, want -1", name, got)
		}
		m.Close()
	}
}

// Kafka 4.4.0 shut its broker down at epoch 43: a Varve node adopting
// that log dir registers with it as its previous epoch.
func TestPreviousBrokerEpochKafkaWrote(t *testing.T) {
	m := openManager(t, []string{copyKafkaLogDir(t, false)}, fixtureNow)
	defer m.Close()
	if got := m.PreviousBrokerEpoch(); got != 43 {
		t.Errorf("previous epoch %d, want 43", got)
	}
}
