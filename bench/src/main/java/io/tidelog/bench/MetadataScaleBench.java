package io.tidelog.bench;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.BrokerRegistration;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.Controller;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/**
 * Tidelog's metadata alone at a size no broker here could host: etcd, the controller, and broker
 * registrations without brokers behind them, in this process, through the same calls a broker
 * makes. Creates {@code topics} topics of {@code partitions} partitions with replication factor
 * {@code brokers} (every registration holds a replica of every partition), then reports:
 *
 * <ul>
 *   <li>{@code create_seconds}: {@link MetadataStore#createTopics} in requests of {@value
 *       #TOPICS_PER_REQUEST} topics, as CreateTopics calls it, until the last is in the image;
 *   <li>{@code read_all_seconds} and {@code image_heap_mib}: what a (re)starting broker does, a new
 *       store reading the whole metadata in pages, and the heap its image takes;
 *   <li>{@code isr_change_ms}: the median of {@value #ISR_CHANGES} ISR changes, each from the write
 *       until the writer's image shows it (what every leadership and ISR change costs at this
 *       size);
 *   <li>{@code failover_seconds}: the last registration goes (its lease revoked, as when its
 *       broker's session ends), and the time until the controller has moved every leadership it had
 *       and taken it out of every ISR, in another broker's image;
 *   <li>etcd's database size and resident memory.
 * </ul>
 *
 * <p>Usage: {@code MetadataScaleBench <etcd endpoint> <etcd pid file> <topics> <partitions>
 * <brokers>}. Prints one line per figure: {@code figure<TAB>value}.
 */
public final class MetadataScaleBench {
  private static final int TOPICS_PER_REQUEST = 500;
  private static final int ISR_CHANGES = 21;
  private static final long SESSION_MS = 9_000;
  private static final long POLL_MS = 200;
  private static final long STEP_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(60);

  private MetadataScaleBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println(
          "usage: MetadataScaleBench <etcd endpoint> <etcd pid file> <topics> <partitions>"
              + " <brokers>");
      System.exit(2);
    }
    String endpoint = args[0];
    Path etcdPid = Path.of(args[1]);
    int topics = Integer.parseInt(args[2]);
    int partitions = Integer.parseInt(args[3]);
    int brokers = Integer.parseInt(args[4]);
    long total = (long) topics * partitions;
    report("partitions", total);
    report("replication_factor", brokers);

    try (MetadataStore store = MetadataStore.connect(List.of(endpoint), "scale");
        Controller controller =
            new Controller(
                store,
                0,
                new io.tidelog.broker.config.EffectiveTopicConfigs(Map::of),
                false,
                300_000)) {
      List<BrokerRegistration> registrations = new ArrayList<>();
      try {
        measure(store, controller, registrations, endpoint, etcdPid, topics, partitions, brokers);
      } finally {
        for (BrokerRegistration registration : registrations) {
          registration.close();
        }
      }
    }
  }

  private static void measure(
      MetadataStore store,
      Controller controller,
      List<BrokerRegistration> registrations,
      String endpoint,
      Path etcdPid,
      int topics,
      int partitions,
      int brokers)
      throws Exception {
    for (int id = 0; id < brokers; id++) {
      BrokerRegistration registration =
          new BrokerRegistration(
              store,
              new BrokerInfo(
                  id,
                  List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092 + id)),
                  null,
                  "bench-" + id,
                  false),
              SESSION_MS,
              id == 0 ? controller::campaign : lease -> {},
              () -> {},
              () -> {});
      registration.register();
      registrations.add(registration);
    }
    await(store, "the controller to be elected", image -> image.controllerId() == 0);

    long start = System.nanoTime();
    for (int first = 0; first < topics; first += TOPICS_PER_REQUEST) {
      List<MetadataStore.NewTopic> batch = new ArrayList<>();
      for (int t = first; t < Math.min(topics, first + TOPICS_PER_REQUEST); t++) {
        batch.add(new MetadataStore.NewTopic(topic(t), partitions, brokers, Map.of()));
      }
      for (var outcome : store.createTopics(batch).values()) {
        outcome.get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      }
    }
    report("create_seconds", seconds(start));
    reportEtcd(endpoint, etcdPid, "etcd");

    long heapBefore = usedHeap();
    start = System.nanoTime();
    try (MetadataStore restarted = MetadataStore.connect(List.of(endpoint), "scale")) {
      report("read_all_seconds", seconds(start));
      report("image_heap_mib", (usedHeap() - heapBefore) >> 20);
      report("image_partitions", restarted.image().partitions().size());
    }

    List<Long> isrChanges = new ArrayList<>();
    for (int i = 0; i < ISR_CHANGES; i++) {
      TopicPartition tp = new TopicPartition(topic(i % topics), 0);
      PartitionState state = store.image().partition(tp).orElseThrow();
      long changeStart = System.nanoTime();
      store.alterIsr(tp, state, state.isr()).orElseThrow();
      isrChanges.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - changeStart));
    }
    Collections.sort(isrChanges);
    report("isr_change_ms", isrChanges.get(isrChanges.size() / 2) / 1000.0);

    int gone = brokers - 1;
    report(
        "failed_broker_led_partitions",
        store.image().partitions().values().stream().filter(p -> p.leader() == gone).count());
    start = System.nanoTime();
    registrations.remove(gone).close();
    await(
        store,
        "every partition to move off broker " + gone,
        image ->
            image.partitions().values().stream()
                .noneMatch(p -> p.leader() == gone || p.isr().contains(gone)));
    report("failover_seconds", seconds(start));
    reportEtcd(endpoint, etcdPid, "etcd_after_failover");
  }

  /**
   * Waits until the image satisfies {@code condition}, checking it every {@value #POLL_MS} ms: a
   * check scans up to a million partitions, which at every published image would take the CPU from
   * what is measured.
   */
  private static void await(MetadataStore store, String what, Predicate<ClusterImage> condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    while (!condition.test(store.image())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(POLL_MS);
    }
  }

  private static String topic(int t) {
    return String.format("scale-%06d", t);
  }

  private static long usedHeap() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** etcd's database size, from its own metrics, and its resident memory. */
  private static void reportEtcd(String endpoint, Path pidFile, String name) throws Exception {
    String metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(endpoint + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    double dbBytes =
        metrics
            .lines()
            .filter(line -> line.startsWith("etcd_mvcc_db_total_size_in_bytes "))
            .mapToDouble(line -> Double.parseDouble(line.substring(line.indexOf(' ') + 1)))
            .findFirst()
            .orElse(-1);
    report(name + "_db_mib", Math.round(dbBytes / (1 << 20)));
    String pid = Files.readString(pidFile).trim();
    long rssKb =
        Files.readAllLines(Path.of("/proc", pid, "status")).stream()
            .filter(line -> line.startsWith("VmRSS:"))
            .mapToLong(line -> Long.parseLong(line.replaceAll("[^0-9]", "")))
            .findFirst()
            .orElse(-1);
    report(name + "_rss_mib", rssKb / 1024);
  }

  private static double seconds(long startNanos) {
    return Math.round((System.nanoTime() - startNanos) / 1e7) / 100.0;
  }

  private static void report(String figure, Object value) {
    System.out.println(figure + "\t" + value);
  }
}
