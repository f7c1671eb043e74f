package io.tidelog.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Many partitions on one broker, Tidelog's or Apache Kafka's: creates {@code topics} topics of
 * {@code partitions} partitions each through Admin, in requests of {@value #TOPICS_PER_REQUEST}
 * topics, then measures what a user of that many partitions meets:
 *
 * <ul>
 *   <li>creation: from the first CreateTopics to the last answered;
 *   <li>Metadata for all topics ({@code KafkaConsumer.listTopics}, one Metadata request naming no
 *       topic): the median of {@value #METADATA_RUNS};
 *   <li>the broker's resident memory, open file descriptors and memory mappings, from /proc, and
 *       those of its metadata store when it runs apart (Tidelog's etcd);
 *   <li>restart: {@code kill -9}, start, and the time until the broker serves again: every topic in
 *       its Metadata answer with a leader for every partition, and an {@code acks=all} produce to
 *       the last topic acknowledged; then the same figures of memory and handles.
 * </ul>
 *
 * <p>Usage: {@code ScaleBench <control> <bootstrap> <topics> <partitions> <broker pid file>
 * [<metadata store pid file>]}, where {@code <control> kill 1} SIGKILLs the broker and {@code
 * <control> start 1} starts it. Prints one line per figure: {@code figure<TAB>value}.
 */
public final class ScaleBench {
  private static final int TOPICS_PER_REQUEST = 500;
  private static final int METADATA_RUNS = 5;
  private static final long STEP_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(30);

  private ScaleBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 5 || args.length > 6) {
      System.err.println(
          "usage: ScaleBench <control> <bootstrap> <topics> <partitions> <broker pid file>"
              + " [<metadata store pid file>]");
      System.exit(2);
    }
    ClusterControl control = new ClusterControl(args[0], STEP_TIMEOUT_MS);
    String bootstrap = args[1];
    int topics = Integer.parseInt(args[2]);
    int partitions = Integer.parseInt(args[3]);
    Path brokerPid = Path.of(args[4]);
    Path storePid = args.length == 6 ? Path.of(args[5]) : null;

    report("partitions", topics * (long) partitions);
    try (Admin admin = admin(bootstrap)) {
      long start = System.nanoTime();
      for (int first = 0; first < topics; first += TOPICS_PER_REQUEST) {
        List<NewTopic> batch = new ArrayList<>();
        for (int t = first; t < Math.min(topics, first + TOPICS_PER_REQUEST); t++) {
          batch.add(new NewTopic(topic(t), partitions, (short) 1));
        }
        admin.createTopics(batch).all().get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      }
      report("create_seconds", seconds(start));
    }
    awaitServing(bootstrap, topics, partitions, System.nanoTime());
    report("metadata_all_ms", metadataAllMillis(bootstrap));
    reportProcess("broker", brokerPid);
    if (storePid != null) {
      reportProcess("store", storePid);
    }

    control.kill(1);
    long restart = System.nanoTime();
    control.start(1);
    awaitServing(bootstrap, topics, partitions, restart);
    report("restart_seconds", seconds(restart));
    report("metadata_all_after_restart_ms", metadataAllMillis(bootstrap));
    reportProcess("broker_after_restart", brokerPid);
  }

  private static String topic(int t) {
    return String.format("scale-%05d", t);
  }

  /** Waits until every topic has a leader for every partition and a produce is acknowledged. */
  private static void awaitServing(String bootstrap, int topics, int partitions, long since)
      throws Exception {
    long deadline = since + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    while (true) {
      try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
        Map<String, List<PartitionInfo>> all = consumer.listTopics(Duration.ofSeconds(30));
        long led = 0;
        for (int t = 0; t < topics; t++) {
          List<PartitionInfo> infos = all.get(topic(t));
          if (infos != null) {
            led += infos.stream().filter(p -> p.leader() != null && !p.leader().isEmpty()).count();
          }
        }
        if (led == (long) topics * partitions) {
          try (KafkaProducer<String, String> producer = producer(bootstrap)) {
            producer
                .send(new ProducerRecord<>(topic(topics - 1), "serving"))
                .get(30, TimeUnit.SECONDS);
            return;
          }
        }
      } catch (Exception e) {
        // not serving yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the broker did not serve every partition in time");
      }
      Thread.sleep(500);
    }
  }

  private static long metadataAllMillis(String bootstrap) {
    List<Long> millis = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
      consumer.listTopics(Duration.ofSeconds(60)); // connects
      for (int run = 0; run < METADATA_RUNS; run++) {
        long start = System.nanoTime();
        consumer.listTopics(Duration.ofSeconds(60));
        millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      }
    }
    Collections.sort(millis);
    return millis.get(millis.size() / 2);
  }

  private static void reportProcess(String name, Path pidFile) throws Exception {
    String pid = Files.readString(pidFile).trim();
    Path proc = Path.of("/proc", pid);
    long rssKb =
        Files.readAllLines(proc.resolve("status")).stream()
            .filter(line -> line.startsWith("VmRSS:"))
            .mapToLong(line -> Long.parseLong(line.replaceAll("[^0-9]", "")))
            .findFirst()
            .orElse(-1);
    long fds;
    try (Stream<Path> open = Files.list(proc.resolve("fd"))) {
      fds = open.count();
    }
    long maps = Files.readAllLines(proc.resolve("maps")).size();
    report(name + "_rss_mib", rssKb / 1024);
    report(name + "_open_fds", fds);
    report(name + "_memory_mappings", maps);
  }

  private static double seconds(long startNanos) {
    return Math.round((System.nanoTime() - startNanos) / 1e7) / 100.0;
  }

  private static void report(String figure, Object value) {
    System.out.println(figure + "\t" + value);
  }

  private static Admin admin(String bootstrap) {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
            (int) STEP_TIMEOUT_MS,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            (int) STEP_TIMEOUT_MS));
  }

  private static KafkaConsumer<String, String> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG,
            60_000),
        new StringDeserializer(),
        new StringDeserializer());
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(),
        new StringSerializer());
  }
}
