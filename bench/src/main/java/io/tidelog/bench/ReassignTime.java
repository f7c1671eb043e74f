package io.tidelog.bench;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The time a cluster, Tidelog's or Apache Kafka's, takes to move a partition's replica of {@code
 * megabytes} MB from one broker to another by reassignment (AlterPartitionReassignments), as {@code
 * kafka-reassign-partitions --execute [--throttle]} does: from the request until the partition's
 * replicas are the new broker alone and no reassignment is listed. The partition has one replica,
 * on the lowest broker id, written beforehand with incompressible records; the target is the next
 * broker id. With a throttle (bytes/s), both brokers' leader and follower rates are set to it and
 * the moving replicas are marked throttled, as the tool does.
 *
 * <p>Usage: {@code ReassignTime <bootstrap> <megabytes> <throttle bytes/s, 0 for none>}; prints one
 * line with the time and the rate.
 */
public final class ReassignTime {
  private static final String TOPIC = "moved";
  private static final int RECORD_BYTES = 64 * 1024;
  private static final long MOVE_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(30);

  private ReassignTime() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: ReassignTime <bootstrap> <megabytes> <throttle bytes/s, 0: none>");
      System.exit(2);
    }
    String bootstrap = args[0];
    long megabytes = Long.parseLong(args[1]);
    long throttle = Long.parseLong(args[2]);
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      List<Integer> ids =
          admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
              .map(Node::id)
              .sorted()
              .toList();
      int from = ids.get(0);
      int to = ids.get(1);
      admin
          .createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(from)))))
          .all()
          .get(30, TimeUnit.SECONDS);
      long written = fill(bootstrap, megabytes);
      if (throttle > 0) {
        throttle(admin, List.of(from, to), throttle, from, to);
      }
      TopicPartition tp = new TopicPartition(TOPIC, 0);
      long start = System.nanoTime();
      admin
          .alterPartitionReassignments(
              Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(to)))))
          .all()
          .get(30, TimeUnit.SECONDS);
      long deadline = start + TimeUnit.MILLISECONDS.toNanos(MOVE_TIMEOUT_MS);
      while (!moved(admin, tp, to)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the move did not end within " + MOVE_TIMEOUT_MS + " ms");
        }
        Thread.sleep(50);
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.printf(
          "moved %d MB from broker %d to %d%s in %d ms (%.1f MB/s)%n",
          written >> 20,
          from,
          to,
          throttle > 0 ? " at a throttle of " + throttle + " B/s" : "",
          millis,
          (written / 1048576.0) / (millis / 1000.0));
    }
  }

  /** Writes about {@code megabytes} MB of incompressible records; the bytes written. */
  private static long fill(String bootstrap, long megabytes) throws Exception {
    byte[] value = new byte[RECORD_BYTES];
    new Random(1).nextBytes(value);
    long records = (megabytes << 20) / RECORD_BYTES;
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "1",
                ProducerConfig.LINGER_MS_CONFIG,
                20,
                ProducerConfig.BATCH_SIZE_CONFIG,
                1 << 20),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (long i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>(TOPIC, 0, null, value));
      }
      producer.flush();
    }
    return records * RECORD_BYTES;
  }

  /** Both brokers' throttle rates, and the moving replicas marked throttled, as the tool sets. */
  private static void throttle(Admin admin, List<Integer> brokers, long rate, int from, int to)
      throws Exception {
    Map<ConfigResource, java.util.Collection<AlterConfigOp>> configs = new java.util.HashMap<>();
    for (int broker : brokers) {
      configs.put(
          new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(broker)),
          List.of(
              set("leader.replication.throttled.rate", String.valueOf(rate)),
              set("follower.replication.throttled.rate", String.valueOf(rate))));
    }
    configs.put(
        new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
        List.of(
            set("leader.replication.throttled.replicas", "0:" + from),
            set("follower.replication.throttled.replicas", "0:" + to)));
    admin.incrementalAlterConfigs(configs).all().get(30, TimeUnit.SECONDS);
  }

  private static AlterConfigOp set(String key, String value) {
    return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
  }

  private static boolean moved(Admin admin, TopicPartition tp, int to) throws Exception {
    return admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS).isEmpty()
        && admin
            .describeTopics(List.of(TOPIC))
            .allTopicNames()
            .get(30, TimeUnit.SECONDS)
            .get(TOPIC)
            .partitions()
            .get(0)
            .replicas()
            .stream()
            .map(Node::id)
            .toList()
            .equals(List.of(to));
  }
}
