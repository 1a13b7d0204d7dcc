package metadata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: ConfigurationControlManager.replay for resource type BROKER.
// Kafka's storage formatter writes the cluster default (name "") of
// min.insync.replicas; a broker's own settings are named by its id. A
// value replaces, a null removes, a resource without settings is gone,
// and the image before the change is untouched.
func TestApplyBrokerConfigs(t *testing.T) {
	set := func(res, name, v string) ConfigRecord {
		return ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: res, Name: name, Value: &v}
	}
	img, err := Apply(New("c"), set("", "min.insync.replicas", "1"), set("1", "log.cleaner.threads", "2"),
		set("1", "message.max.bytes", "2048"), set("", "min.insync.replicas", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"", "1"}, img.BrokerConfigResources()); d != "" {
		t.Fatalf("resources (-want +got):\n%s", d)
	}
	if got := img.BrokerConfigs("")["min.insync.replicas"]; got != "2" {
		t.Fatalf("cluster default min.insync.replicas = %q", got)
	}
	next, err := Apply(img, ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "", Name: "min.insync.replicas"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"1"}, next.BrokerConfigResources()); d != "" {
		t.Fatalf("after removal (-want +got):\n%s", d)
	}
	if img.BrokerConfigs("") == nil {
		t.Fatal("the previous image changed")
	}
	if _, err := Apply(img, ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "1"}); err == nil {
		t.Fatal("a broker config without a name applied")
	}
}
