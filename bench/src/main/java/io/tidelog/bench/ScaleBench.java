package io.tidelog.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.IntStream;
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
 * Many partitions on one broker or on three, Tidelog's or Apache Kafka's: creates {@code topics}
 * topics of {@code partitions} partitions each through Admin, in requests of {@value
 * #TOPICS_PER_REQUEST} topics, then measures what a user of that many partitions meets:
 *
 * <ul>
 *   <li>creation: from the first CreateTopics to the last answered;
 *   <li>Metadata for all topics ({@code KafkaConsumer.listTopics}, one Metadata request naming no
 *       topic): the median of {@value #METADATA_RUNS};
 *   <li>the first broker's resident memory, open file descriptors and memory mappings, from /proc,
 *       and those of its metadata store when it runs apart (Tidelog's etcd);
 *   <li>on one broker, restart: {@code kill -9}, start, and the time until the broker serves again:
 *       every topic in its Metadata answer with a leader for every partition, and an {@code
 *       acks=all} produce to the last topic acknowledged; then the same figures of memory and
 *       handles;
 *   <li>on several, the time from the creation's end until every partition's ISR holds all its
 *       replicas and keeps them for longer than {@code replica.lag.time.max.ms}; then failover:
 *       {@code kill -9} of the first broker (it leads about a third of the partitions), and the
 *       time until every partition has a live leader in the Metadata of the others; then restart:
 *       start it again, and the time until it is back in the ISR of every partition it holds a
 *       replica of.
 * </ul>
 *
 * <p>Usage: {@code ScaleBench <control> <bootstrap> <topics> <partitions> <replication factor>
 * <broker pid file> [<metadata store pid file>]}, where {@code <control> kill 1} SIGKILLs the first
 * broker, the one at the first bootstrap address, and {@code <control> start 1} starts it. Prints
 * one line per figure: {@code figure<TAB>value}.
 */
public final class ScaleBench {
  private static final int TOPICS_PER_REQUEST = 500;
  private static final int METADATA_RUNS = 5;
  private static final long STEP_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(30);

  /** Longer than replica.lag.time.max.ms (30 s on both systems), for an ISR to count as stable. */
  private static final long ISR_STABLE_MS = 35_000;

  private ScaleBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 6 || args.length > 7) {
      System.err.println(
          "usage: ScaleBench <control> <bootstrap> <topics> <partitions> <replication factor>"
              + " <broker pid file> [<metadata store pid file>]");
      System.exit(2);
    }
    ClusterControl control = new ClusterControl(args[0], STEP_TIMEOUT_MS);
    String bootstrap = args[1];
    Scale scale =
        new Scale(Integer.parseInt(args[2]), Integer.parseInt(args[3]), Short.parseShort(args[4]));
    Path brokerPid = Path.of(args[5]);
    Path storePid = args.length == 7 ? Path.of(args[6]) : null;

    report("partitions", scale.total());
    report("replication_factor", scale.replicationFactor());
    try (Admin admin = admin(bootstrap)) {
      long start = System.nanoTime();
      for (int first = 0; first < scale.topics(); first += TOPICS_PER_REQUEST) {
        List<NewTopic> batch = new ArrayList<>();
        for (int t = first; t < Math.min(scale.topics(), first + TOPICS_PER_REQUEST); t++) {
          batch.add(new NewTopic(topic(t), scale.partitions(), scale.replicationFactor()));
        }
        admin.createTopics(batch).all().get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      }
      report("create_seconds", seconds(start));
    }
    awaitServing(bootstrap, scale, System.nanoTime());
    report("metadata_all_ms", metadataAllMillis(bootstrap));
    reportProcess("broker", brokerPid);
    if (storePid != null) {
      reportProcess("store", storePid);
    }

    String first = bootstrap.split(",")[0];
    String others = bootstrap.substring(first.length()).replaceFirst("^,", "");
    if (others.isEmpty()) {
      control.kill(1);
      long restart = System.nanoTime();
      control.start(1);
      awaitServing(bootstrap, scale, restart);
      report("restart_seconds", seconds(restart));
    } else {
      // A partition whose followers fell out of its ISR has no leader to fail over to (Kafka's
      // and Tidelog's clean election): wait until every ISR is full and stays so for longer than
      // replica.lag.time.max.ms (new ISRs are full until followers that have not fetched yet are
      // dropped), and say how long that took
      report("full_isr_after_creation_seconds", awaitStableFullIsrs(bootstrap, scale));
      int killed = nodeAt(bootstrap, first);
      report(
          "killed_broker_led_partitions",
          count(others, scale, p -> p.leader() != null && p.leader().id() == killed));
      control.kill(1);
      long failover = System.nanoTime();
      awaitAll(
          others,
          scale,
          failover,
          p -> p.leader() != null && !p.leader().isEmpty() && p.leader().id() != killed);
      report("failover_seconds", seconds(failover));
      long restart = System.nanoTime();
      control.start(1);
      awaitAll(others, scale, restart, p -> p.inSyncReplicas().length == p.replicas().length);
      report("restart_seconds", seconds(restart));
    }
    report("metadata_all_after_restart_ms", metadataAllMillis(bootstrap));
    reportProcess("broker_after_restart", brokerPid);
  }

  /** What the benchmark creates. */
  private record Scale(int topics, int partitions, short replicationFactor) {
    long total() {
      return (long) topics * partitions;
    }
  }

  /** The id of the broker listening at {@code address}, from the cluster's metadata. */
  private static int nodeAt(String bootstrap, String address) throws Exception {
    try (Admin admin = admin(bootstrap)) {
      int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
      return admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).stream()
          .filter(node -> node.port() == port)
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no broker at " + address))
          .id();
    }
  }

  private static long count(String bootstrap, Scale scale, Predicate<PartitionInfo> which) {
    try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
      Map<String, List<PartitionInfo>> all = consumer.listTopics(Duration.ofSeconds(60));
      return ours(all, scale).filter(which).count();
    }
  }

  private static Stream<PartitionInfo> ours(Map<String, List<PartitionInfo>> all, Scale scale) {
    return IntStream.range(0, scale.topics())
        .mapToObj(t -> all.getOrDefault(topic(t), List.of()))
        .flatMap(List::stream);
  }

  /**
   * Waits until every partition satisfies {@code condition} in the Metadata of {@code bootstrap}.
   */
  private static void awaitAll(
      String bootstrap, Scale scale, long since, Predicate<PartitionInfo> condition)
      throws Exception {
    long deadline = since + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    while (true) {
      try {
        if (count(bootstrap, scale, condition) == scale.total()) {
          return;
        }
      } catch (Exception e) {
        // not answering yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not every partition got there in time");
      }
      Thread.sleep(200);
    }
  }

  /**
   * Waits until every partition's ISR holds all its replicas in {@value #ISR_STABLE_MS} ms of
   * consecutive Metadata answers.
   *
   * @return the seconds from now until the first of those answers
   */
  private static double awaitStableFullIsrs(String bootstrap, Scale scale) throws Exception {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    long fullSince = -1;
    while (fullSince < 0
        || System.nanoTime() - fullSince < TimeUnit.MILLISECONDS.toNanos(ISR_STABLE_MS)) {
      long asked = System.nanoTime();
      boolean full;
      try {
        full =
            count(bootstrap, scale, p -> p.inSyncReplicas().length == p.replicas().length)
                == scale.total();
      } catch (Exception e) {
        full = false;
      }
      fullSince = full ? (fullSince < 0 ? asked : fullSince) : -1;
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the ISRs did not stay full in time");
      }
      Thread.sleep(1_000);
    }
    return Math.round((fullSince - start) / 1e7) / 100.0;
  }

  private static String topic(int t) {
    return String.format("scale-%05d", t);
  }

  /** Waits until every topic has a leader for every partition and a produce is acknowledged. */
  private static void awaitServing(String bootstrap, Scale scale, long since) throws Exception {
    awaitAll(bootstrap, scale, since, p -> p.leader() != null && !p.leader().isEmpty());
    long deadline = since + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    while (true) {
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        producer
            .send(new ProducerRecord<>(topic(scale.topics() - 1), "serving"))
            .get(30, TimeUnit.SECONDS);
        return;
      } catch (Exception e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the brokers did not acknowledge a produce in time", e);
        }
        Thread.sleep(500);
      }
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
