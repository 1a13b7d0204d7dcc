import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.serialization.StringDeserializer;

// RegexConsumer subscribes with a KIP-848 SubscriptionPattern (the
// broker resolves the regular expression) and prints "topic value" for
// each record until it has read the number asked for, then commits.
// Arguments: bootstrap servers, group id, pattern, records.
public class RegexConsumer {
    public static void main(String[] args) {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("group.protocol", "consumer");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        int want = Integer.parseInt(args[3]);
        int got = 0;
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.subscribe(new SubscriptionPattern(args[2]));
            long deadline = System.currentTimeMillis() + 90_000;
            while (got < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    System.out.println(r.topic() + " " + r.value());
                    got++;
                }
                System.out.flush();
            }
            c.commitSync();
        }
        if (got < want) {
            System.exit(2);
        }
    }
}
