package main

import (
	"fmt"
)

// kafkaPorts are the loopback ports of one Kafka node.
type kafkaPorts struct {
	broker, controller int
}

// kafkaServerProps is a KRaft server.properties for one node that is both
// broker and controller, on loopback, with Kafka's defaults for everything
// the paper's tests touch: no log.flush.interval.* (never fsync on the
// produce path), 3 network and 8 I/O threads, 1 GiB segments.
func kafkaServerProps(logDir string, p kafkaPorts) map[string]string {
	return map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          "1",
		"controller.quorum.voters":                         fmt.Sprintf("1@127.0.0.1:%d", p.controller),
		"listeners":                                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", p.broker, p.controller),
		"advertised.listeners":                             fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", p.broker),
		"controller.listener.names":                        "CONTROLLER",
		"inter.broker.listener.name":                       "PLAINTEXT",
		"listener.security.protocol.map":                   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                                         logDir,
		"num.partitions":                                   "1",
		"offsets.topic.replication.factor":                 "1",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
	}
}
