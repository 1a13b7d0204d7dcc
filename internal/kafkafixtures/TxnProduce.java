// Writes the transactions of generate-txn.sh: run with Java 17+'s
// single-file launcher and Kafka's jars on the class path,
//   java -cp "libs/*" TxnProduce.java BOOTSTRAP TOPIC
// Four transactions on partition 0, each of three records keyed
// k0..k2: the first commits, the second aborts, the third and fourth
// commit. The fourth's values are padded to 2,000 bytes, so that the
// segment passes index.interval.bytes and its .index gets an entry.
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnProduce {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "fixture-txn");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        String[] outcomes = {"committed", "aborted", "committed", "committed"};
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (int t = 0; t < outcomes.length; t++) {
                producer.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    String value = "txn" + t + "-" + outcomes[t] + "-" + i;
                    if (t == 3) {
                        value = value + "-" + "x".repeat(2000 - value.length() - 1);
                    }
                    producer.send(new ProducerRecord<>(args[1], 0, "k" + i, value)).get();
                }
                if (outcomes[t].equals("aborted")) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
    }
}
