package io.tidelog.bench;

import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end latency as Kafka's {@code EndToEndLatency} tool measures it (one producer sending
 * synchronously with {@code linger.ms=0}, one consumer of the same partition polling with {@code
 * fetch.max.wait.ms=0}; each message is timed from the send to the poll that returns it), but timed
 * in nanoseconds rather than whole milliseconds, so that percentiles of a millisecond or two can be
 * told apart. Messages sent in the first {@code WARM_UP} (20 s) are not counted: they warm up the
 * clients and the brokers, whose JIT compilers otherwise take a core of this machine's two for the
 * first ten seconds or so and set the percentiles (p99 twice the steady state's), as {@link
 * ProduceLatency}'s warm-up does for it.
 *
 * <p>Usage: {@code EndToEndLatency <bootstrap> <topic> <messages> <acks> <recordBytes>
 * [client.properties]}; the topic's partition 0 is used. Prints one line: {@code avg A p50 B p99 C
 * p99.9 D (ms)}.
 */
public final class EndToEndLatency {
  private static final Duration WARM_UP = Duration.ofSeconds(20);
  private static final Duration POLL_TIMEOUT = Duration.ofSeconds(60);

  private EndToEndLatency() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 5 || args.length > 6 || !args[3].matches("1|all")) {
      System.err.println(
          "usage: EndToEndLatency <bootstrap> <topic> <messages> <1|all> <recordBytes>"
              + " [client.properties]");
      System.exit(2);
    }
    String topic = args[1];
    int messages = Integer.parseInt(args[2]);
    Properties common = new Properties();
    if (args.length == 6) {
      try (InputStream in = new FileInputStream(args[5])) {
        common.load(in);
      }
    }
    common.put("bootstrap.servers", args[0]);
    Properties producerConfig = new Properties();
    producerConfig.putAll(common);
    producerConfig.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    producerConfig.put(ProducerConfig.ACKS_CONFIG, args[3]);
    Properties consumerConfig = new Properties();
    consumerConfig.putAll(common);
    consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, "latency-" + System.nanoTime());
    consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    consumerConfig.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "0");
    TopicPartition partition = new TopicPartition(topic, 0);
    byte[] value = new byte[Integer.parseInt(args[4])];
    long[] nanos = new long[messages];
    try (KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(
                producerConfig, new ByteArraySerializer(), new ByteArraySerializer());
        KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(
                consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.assign(List.of(partition));
      consumer.seekToEnd(List.of(partition));
      consumer.position(partition);
      long warm = System.nanoTime() + WARM_UP.toNanos();
      while (System.nanoTime() < warm) {
        roundTrip(producer, consumer, topic, value);
      }
      for (int i = 0; i < messages; i++) {
        nanos[i] = roundTrip(producer, consumer, topic, value);
      }
    }
    Arrays.sort(nanos);
    double avg = Arrays.stream(nanos).average().orElse(0);
    System.out.printf(
        "avg %.3f p50 %.3f p99 %.3f p99.9 %.3f (ms)%n",
        avg / 1e6, percentile(nanos, 0.5), percentile(nanos, 0.99), percentile(nanos, 0.999));
  }

  /** Sends one random value and polls until it comes back; returns the nanoseconds that took. */
  private static long roundTrip(
      KafkaProducer<byte[], byte[]> producer,
      KafkaConsumer<byte[], byte[]> consumer,
      String topic,
      byte[] value)
      throws Exception {
    ThreadLocalRandom.current().nextBytes(value);
    long start = System.nanoTime();
    producer.send(new ProducerRecord<>(topic, 0, null, value)).get();
    ConsumerRecord<byte[], byte[]> received = next(consumer);
    long elapsed = System.nanoTime() - start;
    if (!Arrays.equals(received.value(), value)) {
      throw new IllegalStateException("a message came back different");
    }
    return elapsed;
  }

  /** The one record the next polls return; more than one is an error, as in Kafka's tool. */
  private static ConsumerRecord<byte[], byte[]> next(KafkaConsumer<byte[], byte[]> consumer) {
    long deadline = System.nanoTime() + POLL_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      ConsumerRecords<byte[], byte[]> records =
          consumer.poll(Duration.ofNanos(deadline - System.nanoTime()));
      if (records.count() > 1) {
        throw new IllegalStateException("one message was sent and " + records.count() + " came");
      }
      if (records.count() == 1) {
        return records.iterator().next();
      }
    }
    throw new IllegalStateException(
        "no message in " + TimeUnit.NANOSECONDS.toSeconds(POLL_TIMEOUT.toNanos()) + " s");
  }

  /** The {@code q} quantile of {@code sorted} nanoseconds, in milliseconds (nearest rank). */
  static double percentile(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
  }
}
