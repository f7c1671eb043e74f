package io.tidelog.bench;

import java.io.FileInputStream;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produce latency under a fixed load: one producer (kafka-clients' defaults, as {@code
 * ProducerPerformance} runs it) sends records at a steady rate, and each is timed from the moment
 * its schedule gave it to its acknowledgement, so a producer that falls behind counts the wait (no
 * coordinated omission). The first {@code warmupSeconds} run at the same rate and are not counted,
 * so that neither the client's nor the broker's warm-up lands in the percentiles: {@code
 * ProducerPerformance} counts its first seconds, and on a short run its p99 is its warm-up.
 *
 * <p>Usage: {@code ProduceLatency <bootstrap> <topic> <recordsPerSecond> <warmupSeconds> <seconds>
 * <acks> <recordBytes> [client.properties]}. Prints one line: {@code rate R avg A p50 B p99 C p99.9
 * D max E (ms)}, R the records per second acknowledged while measured.
 */
public final class ProduceLatency {
  /** Records sent but not acknowledged at most, beyond which the schedule waits (and counts it). */
  private static final int MAX_IN_FLIGHT = 100_000;

  private ProduceLatency() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 7 || args.length > 8) {
      System.err.println(
          "usage: ProduceLatency <bootstrap> <topic> <recordsPerSecond> <warmupSeconds> <seconds>"
              + " <acks> <recordBytes> [client.properties]");
      System.exit(2);
    }
    String topic = args[1];
    int rate = Integer.parseInt(args[2]);
    int warmup = Integer.parseInt(args[3]) * rate;
    int measured = Integer.parseInt(args[4]) * rate;
    Properties config = new Properties();
    if (args.length == 8) {
      try (InputStream in = new FileInputStream(args[7])) {
        config.load(in);
      }
    }
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    config.put(ProducerConfig.ACKS_CONFIG, args[5]);
    byte[] value = new byte[Integer.parseInt(args[6])];
    ThreadLocalRandom.current().nextBytes(value);
    long[] nanos = new long[measured];
    AtomicInteger acknowledged = new AtomicInteger();
    AtomicReference<Exception> failure = new AtomicReference<>();
    Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
    long periodNanos = TimeUnit.SECONDS.toNanos(1) / rate;
    long measuredFrom;
    long measuredTo;
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
      measuredFrom = start + warmup * periodNanos;
      for (int i = 0; i < warmup + measured && failure.get() == null; i++) {
        long due = start + i * periodNanos;
        long early = due - System.nanoTime();
        if (early > 0) {
          LockSupport.parkNanos(early);
        }
        inFlight.acquire();
        int index = i - warmup;
        producer.send(
            new ProducerRecord<>(topic, value),
            (metadata, e) -> {
              long now = System.nanoTime();
              inFlight.release();
              if (e != null) {
                failure.compareAndSet(null, e);
              } else if (index >= 0) {
                nanos[index] = now - due;
                acknowledged.incrementAndGet();
              }
            });
      }
      producer.flush();
      measuredTo = System.nanoTime();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    Arrays.sort(nanos);
    double seconds = (measuredTo - measuredFrom) / 1e9;
    System.out.printf(
        "rate %.0f avg %.3f p50 %.3f p99 %.3f p99.9 %.3f max %.3f (ms)%n",
        acknowledged.get() / seconds,
        Arrays.stream(nanos).average().orElse(0) / 1e6,
        EndToEndLatency.percentile(nanos, 0.5),
        EndToEndLatency.percentile(nanos, 0.99),
        EndToEndLatency.percentile(nanos, 0.999),
        nanos[nanos.length - 1] / 1e6);
  }
}
