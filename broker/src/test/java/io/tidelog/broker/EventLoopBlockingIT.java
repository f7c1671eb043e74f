package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.protocol.MetadataHandler;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.blockhound.BlockHound;

/**
 * Nothing blocks a Vert.x event loop (docs/architecture.md, "Threads"): BlockHound reports every
 * blocking call (file and socket I/O, sleeps, lock and condition waits) made on one while real
 * clients produce, fetch and administer a broker. Runs in a JVM of its own, as BlockHound
 * instruments the whole JVM.
 */
class EventLoopBlockingIT {
  private static final List<String> BLOCKING_CALLS = new CopyOnWriteArrayList<>();
  private static final String FILE_CHANNEL = "sun.nio.ch.FileChannelImpl";

  @TempDir Path dir;

  @BeforeAll
  static void watchEventLoops() throws NoSuchMethodException {
    BlockHound.builder()
        .nonBlockingThreadPredicate(
            current -> current.or(t -> t.getName().startsWith("vert.x-eventloop-thread")))
        // Beyond BlockHound's defaults: the log's own file I/O (sendfile stays allowed, as in
        // Kafka, and so do the reads of a fetch run in place while its shard is idle, which read
        // the pages that the answer's sendfile reads next)
        .markAsBlocking(FILE_CHANNEL, "read", "(Ljava/nio/ByteBuffer;)I")
        .markAsBlocking(FILE_CHANNEL, "read", "(Ljava/nio/ByteBuffer;J)I")
        .markAsBlocking(FILE_CHANNEL, "write", "(Ljava/nio/ByteBuffer;)I")
        .markAsBlocking(FILE_CHANNEL, "write", "(Ljava/nio/ByteBuffer;J)I")
        .markAsBlocking(FILE_CHANNEL, "force", "(Z)V")
        .allowBlockingCallsInside("io.tidelog.broker.log.PartitionLog", "read")
        // and work that grows with the cluster: a Metadata answer describes every topic it names,
        // all of them for a Metadata request naming none (2 to 3 s at 100,000 partitions)
        .markAsBlocking(
            "io.tidelog.broker.protocol.MetadataHandler",
            "describe",
            "(Lio/tidelog/broker/cluster/TopicMetadata;Lio/tidelog/broker/cluster/ClusterImage;)"
                + "Lorg/apache/kafka/common/message/MetadataResponseData$MetadataResponseTopic;")
        // An event loop that terminates hands its termination future's listeners to Netty's
        // global executor, whose queue takes a lock; Netty's own BlockHound integration allows it
        .allowBlockingCallsInside("io.netty.util.concurrent.GlobalEventExecutor", "addTask")
        // and Vert.x, closing, shuts its worker pool (which Metadata answers use) down from an
        // event loop, whose queue takes a lock when the pool was busy
        .allowBlockingCallsInside("io.vertx.core.internal.WorkerPool", "close")
        .blockingMethodCallback(
            method ->
                BLOCKING_CALLS.add(
                    method
                        + " on "
                        + Thread.currentThread().getName()
                        + Arrays.stream(new Throwable().getStackTrace())
                            .limit(25)
                            .map(frame -> "\n    at " + frame)
                            .collect(Collectors.joining())))
        .install();
    // The method marked above exists as named (checked once BlockHound instruments what loads),
    // so the mark cannot watch nothing
    assertThat(
            MetadataHandler.class
                .getDeclaredMethod(
                    "describe", TopicMetadata.class, ClusterImage.class, String.class)
                .getReturnType())
        .isEqualTo(MetadataResponseTopic.class);
  }

  @BeforeEach
  void clear() {
    BLOCKING_CALLS.clear();
  }

  /**
   * Reads {@code partitions} from their start until {@code count} records came (30 s at most), then
   * waits out a long poll (max.wait.ms) with nothing to read.
   */
  private static List<ConsumerRecord<byte[], byte[]>> readFromStart(
      String bootstrap, List<TopicPartition> partitions, int count) {
    List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (read.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(read::add);
      }
      consumer.poll(Duration.ofMillis(700));
    }
    return read;
  }

  @Test
  void theWatchSeesABlockingCallOnAnEventLoop() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      vertx.runOnContext(
          v -> {
            try {
              Thread.sleep(1);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      await().atMost(Duration.ofSeconds(10)).until(() -> !BLOCKING_CALLS.isEmpty());
      assertThat(BLOCKING_CALLS.get(0)).contains("sleep").contains("vert.x-eventloop-thread");
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void clientsProducingFetchingAndAdministeringNeverBlockAnEventLoop() throws Exception {
    try (TestBroker broker = TestBroker.start(dir.resolve("logs"), Map.of());
        Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic("loops", 3, (short) 1))).all().get();
      assertThat(admin.listTopics().names().get()).contains("loops"); // Metadata for all topics
      Properties producerProps = new Properties();
      producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
      producerProps.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip");
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
        for (int i = 0; i < 3000; i++) {
          byte[] value = ("v" + i).getBytes(StandardCharsets.UTF_8);
          producer.send(new ProducerRecord<>("loops", i % 3, null, value));
        }
        producer.flush();
        // auto-created by Metadata
        producer.send(new ProducerRecord<>("loops-auto", new byte[100])).get();
      }
      List<TopicPartition> partitions =
          List.of(
              new TopicPartition("loops", 0),
              new TopicPartition("loops", 1),
              new TopicPartition("loops", 2));
      assertThat(readFromStart(broker.bootstrap(), partitions, 3000)).hasSize(3000);
      TopicPartition first = new TopicPartition("loops", 0);
      admin.listOffsets(Map.of(first, OffsetSpec.maxTimestamp())).all().get();
      admin.deleteRecords(Map.of(first, RecordsToDelete.beforeOffset(10))).all().get();
      ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "loops");
      admin
          .incrementalAlterConfigs(
              Map.of(
                  topic,
                  List.of(
                      new AlterConfigOp(
                          new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET))))
          .all()
          .get();
      admin.describeConfigs(List.of(topic)).all().get();
      admin.createPartitions(Map.of("loops", NewPartitions.increaseTo(4))).all().get();
      admin.describeCluster().nodes().get();
      // a scrape waits for the storage shards, off the event loop
      assertThat(Scrape.of(broker.httpPort).value("tidelog_partitions")).isEqualTo(5);
      admin.deleteTopics(List.of("loops", "loops-auto")).all().get();
    }

    assertThat(BLOCKING_CALLS).isEmpty();
  }

  @Test
  void replicatingWithAcksAllNeverBlocksAnEventLoop() throws Exception {
    // followers' fetches, the high watermark they move and the appends that completes, in place
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        TestBroker one = TestBroker.member(dir.resolve("broker-1"), 1, etcd);
        TestBroker two = TestBroker.member(dir.resolve("broker-2"), 2, etcd);
        TestBroker three = TestBroker.member(dir.resolve("broker-3"), 3, etcd);
        Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, one.bootstrap()))) {
      await()
          .atMost(Duration.ofSeconds(60))
          .ignoreExceptions()
          .until(() -> admin.describeCluster().nodes().get().size() == 3);
      admin
          .createTopics(
              List.of(
                  new NewTopic("replicated", 2, (short) 3)
                      .configs(Map.of("min.insync.replicas", "2"))))
          .all()
          .get();
      Properties producerProps = new Properties();
      producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, one.bootstrap());
      producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
        for (int i = 0; i < 200; i++) { // one at a time: each waits for the followers
          producer.send(new ProducerRecord<>("replicated", i % 2, null, new byte[100])).get();
        }
      }
      List<TopicPartition> partitions =
          List.of(new TopicPartition("replicated", 0), new TopicPartition("replicated", 1));
      assertThat(readFromStart(one.bootstrap(), partitions, 200)).hasSize(200);
    }

    assertThat(BLOCKING_CALLS).isEmpty();
  }
}
