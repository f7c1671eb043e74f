package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Send;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The fault suite's {@link Workload} and {@link Checker} for a test that changes a cluster some
 * other way (an operator moving replicas): producers sending with acks=all and readers reading
 * topic {@value #TOPIC} while the test acts, then the checker's verdict on the whole history.
 */
public final class CheckedWorkload implements AutoCloseable {
  public static final String TOPIC = Workload.TOPIC;
  private static final int PRODUCERS = 2;
  private static final int RATE_PER_PRODUCER = 100;

  private final History history = new History();
  private final Workload workload;

  /** What the checker found. */
  public record Verdict(long acknowledged, long anomalies, String summary) {}

  /**
   * Starts producing to and reading the {@code partitions} partitions of {@value #TOPIC}, which
   * must exist; everything stops after {@code limit} at the latest.
   */
  public static CheckedWorkload start(String bootstrap, int partitions, Duration limit) {
    return new CheckedWorkload(bootstrap, partitions, limit);
  }

  private CheckedWorkload(String bootstrap, int partitions, Duration limit) {
    workload = new Workload(new WorkloadClients(bootstrap, Map.of()), history, partitions);
    workload.start(PRODUCERS, RATE_PER_PRODUCER, 1, 1, limit);
  }

  /**
   * Writes 2 MB to each of the {@code partitions} partitions of {@value #TOPIC}, more than a
   * throttled follower's first fetch takes (1 MB a partition), so that a throttled move cannot
   * finish in one fetch. Each value is its own, so the checker sees no duplicate among them.
   */
  public static void fill(String bootstrap, int partitions) {
    String padding = "x".repeat(10_000);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new StringSerializer(),
            new StringSerializer())) {
      for (int p = 0; p < partitions; p++) {
        for (int i = 0; i < 200; i++) {
          producer.send(new ProducerRecord<>(TOPIC, p, null, "fill-" + p + "-" + i + padding));
        }
      }
      producer.flush();
    }
  }

  /** The sends acknowledged so far. */
  public long acknowledged() {
    return history.all(Send.class).stream().filter(Send::acked).count();
  }

  /**
   * Stops the producers, waits until every replica is in sync and the readers have read everything,
   * reads every partition once more from its start, and checks the history.
   */
  public Verdict finish() throws Exception {
    workload.stopProducers();
    workload.awaitInSync();
    workload.drain(Duration.ofSeconds(60), 1);
    workload.finalRead(Duration.ofSeconds(60));
    Checker.Result result = Checker.check(history);
    return new Verdict(acknowledged(), result.count(), result.summary());
  }

  @Override
  public void close() throws InterruptedException {
    workload.close();
  }
}
