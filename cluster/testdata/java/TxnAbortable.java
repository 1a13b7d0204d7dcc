import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

// TxnAbortable runs a transaction whose partition is taken out of it
// under the producer: it produces "cut" to partition 0, prints
// "produced" and waits for a line on stdin (meanwhile the transaction
// is aborted from outside); it then produces "late" to the same
// partition and prints how that ended ("late: ok" or "late: " and the
// exception's class), aborts ("abort: ok" or the exception's class),
// and runs one more transaction with the same producer, which it
// commits ("next: committed"). Arguments: bootstrap servers,
// transactional id, topic.
public class TxnAbortable {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[1]);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        String topic = args[2];
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "cut")).get();
            System.out.println("produced");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            try {
                producer.send(new ProducerRecord<>(topic, 0, null, "late")).get();
                System.out.println("late: ok");
            } catch (ExecutionException e) {
                System.out.println("late: " + e.getCause().getClass().getSimpleName());
            }
            try {
                producer.abortTransaction();
                System.out.println("abort: ok");
            } catch (KafkaException e) {
                System.out.println("abort: " + e.getClass().getSimpleName());
                System.exit(3);
            }
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "next")).get();
            producer.commitTransaction();
            System.out.println("next: committed");
        }
    }
}
