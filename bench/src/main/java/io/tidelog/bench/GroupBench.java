package io.tidelog.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;

/**
 * Consumer-group figures of a cluster, Tidelog's or Apache Kafka's, under kafka-clients:
 *
 * <ul>
 *   <li>{@code rebalance <bootstrap> <runs>}: a group of 3 consumers over 6 partitions, each
 *       polling on its own thread; the time from the third consumer's subscribe until all three own
 *       2 partitions (join), and from its close until the other two own 3 each (leave).
 *   <li>{@code commits <bootstrap> <seconds>}: synchronous offset commits of one consumer, of 1
 *       partition and of 100 partitions at a time; commits and offsets per second.
 *   <li>{@code load <control> <bootstrap> <groups> <partitions>}: {@code groups} groups that share
 *       one {@code __consumer_offsets} partition commit an offset for each of {@code partitions}
 *       partitions; then their coordinator is SIGKILLed ({@code <control> kill <id>}) and the time
 *       until every offset reads back from the new coordinator is measured.
 * </ul>
 */
public final class GroupBench {
  private static final long STEP_TIMEOUT_MS = 120_000;
  private static final int OFFSETS_TOPIC_PARTITIONS = 50;

  private GroupBench() {}

  public static void main(String[] args) throws Exception {
    switch (args.length > 0 ? args[0] : "") {
      case "rebalance" -> rebalance(args[1], Integer.parseInt(args[2]));
      case "commits" -> commits(args[1], Integer.parseInt(args[2]));
      case "load" -> load(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
      default -> {
        System.err.println(
            "usage: GroupBench rebalance <bootstrap> <runs> | commits <bootstrap> <seconds>"
                + " | load <control> <bootstrap> <groups> <partitions>");
        System.exit(2);
      }
    }
  }

  private static Admin admin(String bootstrap) {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
            5000));
  }

  private static void createTopic(Admin admin, String name, int partitions, short replication)
      throws Exception {
    try {
      admin.createTopics(List.of(new NewTopic(name, partitions, replication))).all().get();
    } catch (java.util.concurrent.ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw e;
      }
    }
  }

  private static KafkaConsumer<String, String> consumer(String bootstrap, String group) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.currentTimeMillis() + STEP_TIMEOUT_MS;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(1);
    }
  }

  /** A consumer polling on a thread of its own, publishing how many partitions it owns. */
  private static final class Member implements AutoCloseable {
    final AtomicInteger owned = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Member(String bootstrap, String group, String topic) {
      thread =
          new Thread(
              () -> {
                try (KafkaConsumer<String, String> consumer = consumer(bootstrap, group)) {
                  consumer.subscribe(List.of(topic));
                  while (!stop.get()) {
                    consumer.poll(Duration.ofMillis(20));
                    owned.set(consumer.assignment().size());
                  }
                }
              });
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(STEP_TIMEOUT_MS);
    }
  }

  private static void rebalance(String bootstrap, int runs) throws Exception {
    try (Admin admin = admin(bootstrap)) {
      createTopic(admin, "rebalance", 6, (short) 1);
    }
    List<Long> joins = new ArrayList<>();
    List<Long> leaves = new ArrayList<>();
    for (int run = 0; run < runs; run++) {
      String group = "rebalance-" + run + "-" + System.nanoTime();
      try (Member a = new Member(bootstrap, group, "rebalance");
          Member b = new Member(bootstrap, group, "rebalance")) {
        await(() -> a.owned.get() == 3 && b.owned.get() == 3, "two members owning 3 each");
        long joinStart = System.nanoTime();
        Member c = new Member(bootstrap, group, "rebalance");
        await(
            () -> a.owned.get() == 2 && b.owned.get() == 2 && c.owned.get() == 2,
            "three members owning 2 each");
        long joined = System.nanoTime();
        c.close();
        await(() -> a.owned.get() == 3 && b.owned.get() == 3, "two members owning 3 each again");
        long left = System.nanoTime();
        joins.add((joined - joinStart) / 1_000_000);
        leaves.add((left - joined) / 1_000_000);
        System.out.printf(
            "run %d: join %d ms, leave %d ms%n", run, joins.get(run), leaves.get(run));
      }
    }
    System.out.printf("join median %d ms%n", median(joins));
    System.out.printf("leave median %d ms%n", median(leaves));
  }

  private static long median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }

  private static void commits(String bootstrap, int seconds) throws Exception {
    try (Admin admin = admin(bootstrap)) {
      createTopic(admin, "commits", 100, (short) 1);
    }
    try (KafkaConsumer<String, String> consumer = consumer(bootstrap, "commit-bench")) {
      for (int width : new int[] {1, 100}) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        int count = 0;
        while (System.nanoTime() < deadline) {
          for (int p = 0; p < width; p++) {
            offsets.put(new TopicPartition("commits", p), new OffsetAndMetadata(count));
          }
          consumer.commitSync(offsets);
          count++;
        }
        double elapsedS = (System.nanoTime() - start) / 1e9;
        System.out.printf(
            "commits of %d partitions: %.0f commits/s, %.0f offsets/s%n",
            width, count / elapsedS, count * width / elapsedS);
      }
    }
  }

  private static void load(String control, String bootstrap, int groups, int partitions)
      throws Exception {
    try (Admin admin = admin(bootstrap)) {
      createTopic(admin, "load", partitions, (short) 3);
      // Groups that share one __consumer_offsets partition, so that one coordinator loads them all
      List<String> names = new ArrayList<>();
      int target = Utils.abs("load-0".hashCode()) % OFFSETS_TOPIC_PARTITIONS;
      for (int i = 0; names.size() < groups && i < 1_000_000; i++) {
        if (Utils.abs(("load-" + i).hashCode()) % OFFSETS_TOPIC_PARTITIONS == target) {
          names.add("load-" + i);
        }
      }
      Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        offsets.put(new TopicPartition("load", p), new OffsetAndMetadata(1000 + p));
      }
      for (String group : names) {
        admin.alterConsumerGroupOffsets(group, offsets).all().get();
      }
      int coordinator =
          admin
              .describeConsumerGroups(List.of(names.get(0)))
              .all()
              .get()
              .get(names.get(0))
              .coordinator()
              .id();
      System.out.printf(
          "%d groups x %d partitions = %d offsets committed in __consumer_offsets-%d,"
              + " coordinator %d%n",
          names.size(), partitions, names.size() * partitions, target, coordinator);

      long killed = System.nanoTime();
      Process kill = new ProcessBuilder(control, "kill", String.valueOf(coordinator)).start();
      if (kill.waitFor() != 0) {
        throw new IllegalStateException("kill failed");
      }
      Map<String, ListConsumerGroupOffsetsSpec> all = new HashMap<>();
      names.forEach(g -> all.put(g, new ListConsumerGroupOffsetsSpec()));
      // Ask again every second at most: a request to the dead broker must not wait out Admin's
      // default 60 s API timeout
      try (Admin poller =
          Admin.create(
              Map.of(
                  AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                  AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000,
                  AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 1000))) {
        await(
            () -> {
              try {
                Map<String, Map<TopicPartition, OffsetAndMetadata>> read =
                    poller.listConsumerGroupOffsets(all).all().get();
                return read.values().stream().allMatch(m -> m.equals(offsets));
              } catch (Exception e) {
                return false;
              }
            },
            "every offset from the new coordinator");
      }
      System.out.printf(
          "all %d offsets read back %d ms after the kill%n",
          names.size() * partitions, (System.nanoTime() - killed) / 1_000_000);
    }
  }
}
