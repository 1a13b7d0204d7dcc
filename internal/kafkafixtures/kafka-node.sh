# Shared by generate.sh and generate-txn.sh (sourced, never run): the
# Kafka distribution assembled from Maven Central, and one KRaft node
# started and stopped over it. Needs KAFKA_VERSION and WORK set by the
# caller for start_node.
CACHE=${KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/varve-kafka}
ROOT=$CACHE/kafka-$KAFKA_VERSION
LIBS=$ROOT/libs
# A fixed cluster id keeps meta.properties the same between runs.
CLUSTER_ID=${CLUSTER_ID:-dmFydmUta2Fma2EtZml4MQ}

assemble() {
	[ -f "$LIBS/kafka_2.13-$KAFKA_VERSION.jar" ] && return
	mkdir -p "$ROOT"
	cat >"$ROOT/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>varve.fixtures</groupId>
  <artifactId>kafka-fixtures-assembly</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.25.5</version></dependency>
  </dependencies>
</project>
POM
	rm -rf "$LIBS.partial"
	mvn -B -q -f "$ROOT/pom.xml" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$LIBS.partial"
	mv "$LIBS.partial" "$LIBS"
}

freeport() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

klass() { # run one of Kafka's tool classes
	local main=$1
	shift
	java -Xmx256m -cp "$LIBS/*" "$main" "$@"
}

start_node() {
	java -Xms512m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
		-Dkafka.logs.dir="$WORK/logs" -cp "$LIBS/*" kafka.Kafka "$WORK/server.properties" \
		>>"$WORK/kafka.out" 2>&1 &
	NODE=$!
	for _ in $(seq 180); do
		if klass org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$BPORT" --list >/dev/null 2>&1; then
			return
		fi
		kill -0 "$NODE" 2>/dev/null || { tail -50 "$WORK/kafka.out"; exit 1; }
		sleep 1
	done
	echo "kafka did not start" >&2
	exit 1
}

stop_node() {
	kill -TERM "$NODE"
	wait "$NODE" || true
}

# write_props writes one broker-and-controller node's server.properties
# into $WORK, listening on $BPORT and $CPORT.
write_props() {
	cat >"$WORK/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CPORT
listeners=PLAINTEXT://127.0.0.1:$BPORT,CONTROLLER://127.0.0.1:$CPORT
advertised.listeners=PLAINTEXT://127.0.0.1:$BPORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$WORK/data
metadata.log.dir=$WORK/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
}
