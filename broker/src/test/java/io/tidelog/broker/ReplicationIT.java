package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.cluster.MetadataStore;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopicCollection;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three brokers, each in its own JVM, on a real etcd: the seeds' replication model (ISR, HW, LEO),
 * failover and {@code acks=all}, judged by kafka-clients.
 */
class ReplicationIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private EtcdServer etcd;
  private final Map<Integer, BrokerProcess> brokers = new HashMap<>();
  private Admin admin;

  private void startCluster(Map<String, String> overrides) throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    for (int id = 0; id < 3; id++) {
      brokers.put(
          id, new BrokerProcess(id, dir.resolve("broker-" + id), etcd.endpoint(), overrides));
    }
    for (BrokerProcess broker : brokers.values()) {
      broker.start();
    }
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    // A paused broker accepts connections and never answers: time out fast and try another
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
    admin = Admin.create(props);
    eventually().until(() -> admin.describeCluster().nodes().get().size() == 3);
  }

  private static ConditionFactory eventually() {
    return await().atMost(WAIT).ignoreExceptions();
  }

  private String bootstrap() {
    return brokers.values().stream().map(BrokerProcess::address).collect(Collectors.joining(","));
  }

  @AfterEach
  void stop() throws Exception {
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
    }
    for (BrokerProcess broker : brokers.values()) {
      broker.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private TopicPartitionInfo describe(String topic) throws Exception {
    TopicDescription description =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    return description.partitions().get(0);
  }

  /**
   * After {@code old} stopped leading {@code topic}: another broker leads, the ISR lacks {@code
   * old}, and every record {@code sent} reads back once, in order; then {@code old} starts again,
   * catches up and re-enters the ISR.
   */
  private void assertMovedOffWithNothingLostThenRejoins(String topic, int old, List<String> sent)
      throws Exception {
    TopicPartitionInfo after = describe(topic);
    assertThat(after.leader().id()).isNotEqualTo(old);
    assertThat(ids(after.isr())).doesNotContain(old);
    assertThat(readAll(topic, sent.size(), Duration.ofMillis(500)))
        .extracting(ConsumerRecord::value)
        .containsExactlyElementsOf(sent);
    brokers.get(old).start();
    eventually().until(() -> ids(describe(topic).isr()).contains(old));
  }

  /** Waits until {@code topic}'s partition 0 is led, by a broker other than {@code old}. */
  private void awaitLeaderOtherThan(String topic, int old) {
    eventually()
        .until(
            () -> {
              Node now = describe(topic).leader();
              return now != null && now.id() != old;
            });
  }

  private static List<Integer> ids(List<Node> nodes) {
    return nodes.stream().map(Node::id).sorted().toList();
  }

  private long highWatermark(String topic) throws Exception {
    TopicPartition tp = new TopicPartition(topic, 0);
    return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
  }

  private void createTopic(String name, Map<String, String> configs) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, 1, (short) 3).configs(configs))).all().get();
    eventually().until(() -> describe(name).isr().size() == 3);
  }

  private KafkaProducer<String, String> producer(String acks, Map<String, Object> extra) {
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    props.put(ProducerConfig.ACKS_CONFIG, acks);
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all"));
    props.putAll(extra);
    return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
  }

  private List<ConsumerRecord<String, String>> readAll(String topic, int expected, Duration quiet) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // A paused broker accepts connections and never answers: time out fast and try another
    props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.currentTimeMillis() + WAIT.toMillis();
      while (records.size() < expected && System.currentTimeMillis() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
      long quietEnd = System.currentTimeMillis() + quiet.toMillis();
      while (System.currentTimeMillis() < quietEnd) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  @Test
  void theSeedsWorkedExampleHighWatermarkIsTheSmallestLogEndOffsetInTheIsr() throws Exception {
    // Given three replicas in sync at LEO 4 (a session and lag time longer than the test)
    startCluster(
        Map.of("broker.session.timeout.ms", "300000", "replica.lag.time.max.ms", "300000"));
    createTopic("seeds", Map.of());
    TopicPartitionInfo partition = describe("seeds");
    int leader = partition.leader().id();
    List<Integer> followers =
        ids(partition.replicas()).stream().filter(id -> id != leader).toList();
    try (KafkaProducer<String, String> producer = producer("1", Map.of())) {
      for (int i = 0; i < 4; i++) {
        producer.send(new ProducerRecord<>("seeds", "m" + i)).get();
      }
      eventually().until(() -> highWatermark("seeds") == 4);

      // When follower2 is held back and the leader (and follower1) reach LEO 5
      brokers.get(followers.get(1)).pause();
      producer.send(new ProducerRecord<>("seeds", "m4")).get();
    }

    // Then the HW stays 4, follower2 is still in the ISR, and a consumer reads offsets 0-3 only
    Thread.sleep(1500); // gives the HW time to move, which it must not
    // (retried only past timeouts on the paused broker: neither value can come back once changed)
    eventually().untilAsserted(() -> assertThat(highWatermark("seeds")).isEqualTo(4));
    eventually()
        .untilAsserted(() -> assertThat(ids(describe("seeds").isr())).containsExactly(0, 1, 2));
    assertThat(readAll("seeds", 4, Duration.ofSeconds(1)))
        .extracting(ConsumerRecord::offset)
        .containsExactly(0L, 1L, 2L, 3L);

    // An acks=all produce meanwhile waits for follower2 and times out with REQUEST_TIMED_OUT
    TopicPartition tp = new TopicPartition("seeds", 0);
    try (RawKafkaClient raw = new RawKafkaClient(brokers.get(leader).port)) {
      ProduceRequestData late =
          SampleRequests.produceData(
                  tp,
                  MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("m5".getBytes())))
              .setTimeoutMs(500);
      ProduceResponse response =
          (ProduceResponse) raw.send(ProduceRequest.builder(late).build((short) 9));
      assertThat(
              response.data().responses().iterator().next().partitionResponses().get(0).errorCode())
          .isEqualTo(Errors.REQUEST_TIMED_OUT.code());
    }

    // and once follower2 catches up, HW = 6: offset 4 and the timed-out append (not lost, as in
    // Kafka) are readable
    brokers.get(followers.get(1)).resume();
    eventually().until(() -> highWatermark("seeds") == 6);
    assertThat(readAll("seeds", 6, Duration.ZERO))
        .extracting(ConsumerRecord::value)
        .containsExactly("m0", "m1", "m2", "m3", "m4", "m5");
  }

  @Test
  void aFollowerThatLagsBeyondReplicaLagTimeLeavesTheIsrAndRejoins() throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "60000", "replica.lag.time.max.ms", "2000"));
    createTopic("osr", Map.of());
    TopicPartitionInfo partition = describe("osr");
    int lagging =
        ids(partition.replicas()).stream()
            .filter(id -> id != partition.leader().id())
            .findFirst()
            .orElseThrow();

    int leaderHttpPort = brokers.get(partition.leader().id()).httpPort;
    // On a loaded machine a follower can lag past the 2 s before this point (a slow start), so
    // the counters are compared with their values once the ISR is full, not with zero
    eventually()
        .untilAsserted(
            () -> {
              assertThat(ids(describe("osr").isr())).hasSize(3);
              assertThat(Scrape.of(leaderHttpPort).value("tidelog_under_replicated_partitions"))
                  .isZero();
            });
    Scrape before = Scrape.of(leaderHttpPort);
    double shrinks = before.value("tidelog_isr_shrinks_total");
    double expands = before.value("tidelog_isr_expands_total");

    brokers.get(lagging).pause();
    eventually().until(() -> !ids(describe("osr").isr()).contains(lagging));
    assertThat(ids(describe("osr").replicas())).contains(lagging);
    // The leader's metrics say so: a shrink, one under-replicated partition
    eventually()
        .untilAsserted(
            () -> {
              Scrape shrunk = Scrape.of(leaderHttpPort);
              assertThat(shrunk.value("tidelog_isr_shrinks_total")).isGreaterThan(shrinks);
              assertThat(shrunk.value("tidelog_under_replicated_partitions")).isEqualTo(1);
            });

    brokers.get(lagging).resume();
    eventually().until(() -> ids(describe("osr").isr()).contains(lagging));
    eventually()
        .untilAsserted(
            () -> {
              Scrape healed = Scrape.of(leaderHttpPort);
              assertThat(healed.value("tidelog_isr_expands_total")).isGreaterThan(expands);
              assertThat(healed.value("tidelog_under_replicated_partitions")).isZero();
            });
  }

  @Test
  void killingTheLeaderLosesNoAcknowledgedRecordAndItRejoinsAfterwards() throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "2000"));
    createTopic("failover", Map.of("min.insync.replicas", "2"));
    TopicPartitionInfo before = describe("failover");
    int leader = before.leader().id();
    List<String> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        producer("all", Map.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000))) {
      for (int i = 0; i < 2000; i++) {
        String value = "r" + i;
        producer.send(new ProducerRecord<>("failover", value));
        sent.add(value);
        if (i == 1000) {
          producer.flush();
          brokers.get(leader).kill();
        }
      }
      producer.flush();
    }
    // Every record was acknowledged (send().get() would have thrown otherwise on flush)
    assertMovedOffWithNothingLostThenRejoins("failover", leader, sent);
  }

  /**
   * A killed leader's followers find its port refusing connections and end its session (issue 25):
   * another broker leads long before the 60 s session would expire, with nothing lost; a killed
   * follower's leader does the same; a paused leader, whose port still accepts connections, keeps
   * its session and leadership.
   */
  @Test
  void aKilledBrokerIsFencedBeforeItsSessionExpiresAndAPausedOneIsNot() throws Exception {
    startCluster(
        Map.of("broker.session.timeout.ms", "60000", "auto.leader.rebalance.enable", "false"));
    createTopic("paused", Map.of("min.insync.replicas", "2"));
    int pausedLeader = describe("paused").leader().id();
    brokers.get(pausedLeader).pause();
    Thread.sleep(5000); // time for followers to time out and check the port, which must not fence
    brokers.get(pausedLeader).resume();
    assertThat(describe("paused").leader().id()).isEqualTo(pausedLeader);
    assertThat(ids(describe("paused").isr())).contains(pausedLeader);

    createTopic("crashed", Map.of("min.insync.replicas", "2"));
    int leader = describe("crashed").leader().id();
    List<String> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        producer("all", Map.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000))) {
      for (int i = 0; i < 100; i++) {
        producer.send(new ProducerRecord<>("crashed", "r" + i)).get();
        sent.add("r" + i);
      }
      long killedNanos = System.nanoTime();
      brokers.get(leader).kill();
      // well within the 60 s session: its end was not waited for
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(
              () -> {
                Node now = describe("crashed").leader();
                return now != null && now.id() != leader;
              });
      for (int i = 100; i < 200; i++) {
        producer.send(new ProducerRecord<>("crashed", "r" + i)).get();
        sent.add("r" + i);
      }
      System.out.printf(
          "failover after kill -9: %d ms to the next acknowledged write%n",
          (System.nanoTime() - killedNanos) / 1_000_000);
    }
    double fenced = 0;
    for (BrokerProcess survivor : brokers.values()) {
      if (survivor.id != leader) {
        fenced += Scrape.of(survivor.httpPort).value("tidelog_crashed_brokers_fenced_total");
      }
    }
    assertThat(fenced).as("sessions the survivors ended").isGreaterThanOrEqualTo(1);
    assertMovedOffWithNothingLostThenRejoins("crashed", leader, sent);

    // A killed follower that leads nothing, so that no follower of its own sees it go: its
    // leader sees its fetch connection close, and acks=all writes go on without waiting for the
    // session or replica.lag.time.max.ms to drop it from the ISR
    TopicPartitionInfo now = describe("crashed");
    int leadsPaused = describe("paused").leader().id();
    int follower =
        ids(now.isr()).stream()
            .filter(id -> id != now.leader().id() && id != leadsPaused)
            .findFirst()
            .orElseThrow();
    try (KafkaProducer<String, String> producer =
        producer("all", Map.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000))) {
      producer.send(new ProducerRecord<>("crashed", "before the follower's kill")).get();
      brokers.get(follower).kill();
      producer
          .send(new ProducerRecord<>("crashed", "after the follower's kill"))
          .get(20, java.util.concurrent.TimeUnit.SECONDS);
    }
    assertThat(ids(describe("crashed").isr())).doesNotContain(follower);
  }

  @Test
  void killingTheGroupCoordinatorKeepsTheGroupAndItsCommittedOffsets() throws Exception {
    // Given a consumer group that committed offset 40 of 100 records, on replicated offsets
    startCluster(
        Map.of(
            "broker.session.timeout.ms", "2000",
            "offsets.topic.num.partitions", "3",
            "group.initial.rebalance.delay.ms", "0"));
    createTopic("jobs", Map.of());
    List<String> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      for (int i = 0; i < 100; i++) {
        sent.add("job-" + i);
        producer.send(new ProducerRecord<>("jobs", "job-" + i)).get();
      }
    }
    TopicPartition tp = new TopicPartition("jobs", 0);
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "survivors");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
    props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
    List<String> read = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of("jobs"));
      eventually().until(() -> pollInto(consumer, read) >= 40);
      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(40)));
      ConsumerGroupMetadata before = consumer.groupMetadata();
      Node coordinator = describeGroup("survivors").coordinator();

      // When the coordinator is killed
      brokers.get(coordinator.id()).kill();

      // Then another broker coordinates the group: the same member at the same generation, with
      // offset 40 still committed
      ConsumerGroupDescription after =
          eventually()
              .until(
                  () -> describeGroup("survivors"),
                  d -> d.coordinator().id() != coordinator.id() && !d.members().isEmpty());
      assertThat(after.groupState()).isEqualTo(GroupState.STABLE);
      // (a live broker that is not the coordinator says so)
      int bystander =
          brokers.keySet().stream()
              .filter(id -> id != coordinator.id() && id != after.coordinator().id())
              .findFirst()
              .orElseThrow();
      try (RawKafkaClient client = new RawKafkaClient(brokers.get(bystander).port)) {
        OffsetFetchRequestData fetch =
            new OffsetFetchRequestData()
                .setGroups(
                    List.of(
                        new OffsetFetchRequestGroup()
                            .setGroupId("survivors")
                            .setTopics(
                                List.of(
                                    new OffsetFetchRequestTopics()
                                        .setName("jobs")
                                        .setPartitionIndexes(List.of(0))))));
        OffsetFetchResponse answer =
            (OffsetFetchResponse)
                client.send(
                    OffsetFetchRequest.Builder.forTopicNames(fetch, false).build((short) 8));
        assertThat(answer.data().groups().get(0).errorCode())
            .isEqualTo(Errors.NOT_COORDINATOR.code());
      }
      assertThat(after.members())
          .extracting(MemberDescription::consumerId)
          .containsExactly(before.memberId());
      assertThat(committedOffset("survivors", tp)).isEqualTo(40);

      // And the consumer carries on: it reads the rest and commits on the new coordinator
      eventually().until(() -> pollInto(consumer, read) >= 100);
      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(100)));
      assertThat(read).containsExactlyElementsOf(sent);
      assertThat(consumer.groupMetadata().generationId()).isEqualTo(before.generationId());
    }

    // And __consumer_offsets was created compacted, with a replica on each of the 3 brokers
    TopicDescription offsetsTopic =
        admin
            .describeTopics(List.of("__consumer_offsets"))
            .allTopicNames()
            .get()
            .get("__consumer_offsets");
    assertThat(offsetsTopic.isInternal()).isTrue();
    assertThat(offsetsTopic.partitions()).hasSize(3).allMatch(p -> p.replicas().size() == 3);
    ConfigResource offsetsConfig =
        new ConfigResource(ConfigResource.Type.TOPIC, "__consumer_offsets");
    assertThat(
            admin
                .describeConfigs(List.of(offsetsConfig))
                .all()
                .get()
                .get(offsetsConfig)
                .get("cleanup.policy")
                .value())
        .isEqualTo("compact");

    // And a coordinator computes the lag of its groups on partitions that another broker leads
    int leader = describe("jobs").leader().id();
    String remote = null;
    for (int i = 0; i < 100 && remote == null; i++) {
      Node c = describeGroup("lagging-" + i).coordinator();
      if (c.id() != leader) {
        remote = "lagging-" + i;
      }
    }
    assertThat(remote).as("a group coordinated away from the leader of jobs").isNotNull();
    admin.alterConsumerGroupOffsets(remote, Map.of(tp, new OffsetAndMetadata(30))).all().get();
    int remoteCoordinator = describeGroup(remote).coordinator().id();
    java.net.http.HttpResponse<String> lag =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(
                            "http://127.0.0.1:" + brokers.get(remoteCoordinator).httpPort + "/lag"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(lag.body().lines()).contains(remote + " jobs 0 30 100 70");
    assertThat(committedOffset("survivors", tp)).isEqualTo(100);
  }

  /**
   * A coordinator that takes over answers OffsetFetch COORDINATOR_LOAD_IN_PROGRESS while it loads
   * the groups of its partition of {@code __consumer_offsets}, and then the whole of what was
   * committed, never a part: asked without pause by a client on each surviving broker.
   */
  @Test
  void aNewCoordinatorAnswersLoadInProgressUntilItHasLoadedEveryOffsetOfTheGroup()
      throws Exception {
    // Given 100,000 offsets committed in one partition of __consumer_offsets: 1,000 groups of 100
    startCluster(Map.of("broker.session.timeout.ms", "2000", "offsets.topic.num.partitions", "1"));
    admin.createTopics(List.of(new NewTopic("loaded", 100, (short) 3))).all().get();
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (int p = 0; p < 100; p++) {
      offsets.put(new TopicPartition("loaded", p), new OffsetAndMetadata(1000 + p));
    }
    for (int g = 0; g < 1000; g++) {
      admin.alterConsumerGroupOffsets("loaded-" + g, offsets).all().get();
    }
    int coordinator = describeGroup("loaded-999").coordinator().id();
    List<Integer> survivors =
        brokers.keySet().stream().filter(id -> id != coordinator).sorted().toList();
    eventually().until(() -> describe("__consumer_offsets").isr().size() == 3);
    OffsetFetchRequestData fetch =
        new OffsetFetchRequestData()
            .setGroups(
                List.of(
                    new OffsetFetchRequestGroup()
                        .setGroupId("loaded-999")
                        .setTopics(
                            List.of(
                                new OffsetFetchRequestTopics()
                                    .setName("loaded")
                                    .setPartitionIndexes(
                                        IntStream.range(0, 100).boxed().toList())))));
    List<Errors> answers = new ArrayList<>();
    try (RawKafkaClient first = new RawKafkaClient(brokers.get(survivors.get(0)).port);
        RawKafkaClient second = new RawKafkaClient(brokers.get(survivors.get(1)).port)) {
      // When the coordinator is killed, and both others are asked until one has the group
      brokers.get(coordinator).kill();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      boolean answered = false;
      while (!answered) {
        assertThat(System.nanoTime()).as("answers %s", answers).isLessThan(deadline);
        for (RawKafkaClient client : List.of(first, second)) {
          OffsetFetchResponseGroup group =
              ((OffsetFetchResponse)
                      client.send(
                          OffsetFetchRequest.Builder.forTopicNames(fetch, false).build((short) 8)))
                  .data()
                  .groups()
                  .get(0);
          Errors error = Errors.forCode(group.errorCode());
          answers.add(error);

          // Then each answer is "not here", "not yet", or every offset of the group
          assertThat(error)
              .isIn(Errors.NONE, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR);
          if (error == Errors.NONE) {
            assertThat(group.topics().get(0).partitions())
                .hasSize(100)
                .allMatch(p -> p.committedOffset() == 1000 + p.partitionIndex());
            answered = true;
          }
        }
      }
    }
    // and the load was seen in progress before it answered
    assertThat(answers).as("answers").contains(Errors.COORDINATOR_LOAD_IN_PROGRESS);
    System.out.println(
        "OffsetFetch answers across the failover: "
            + answers.stream()
                .collect(Collectors.groupingBy(e -> e, TreeMap::new, Collectors.counting())));
  }

  private long committedOffset(String group, TopicPartition tp) throws Exception {
    return admin
        .listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata()
        .get()
        .get(tp)
        .offset();
  }

  private ConsumerGroupDescription describeGroup(String group) throws Exception {
    return admin.describeConsumerGroups(List.of(group)).all().get().get(group);
  }

  private static int pollInto(KafkaConsumer<String, String> consumer, List<String> read) {
    consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
    return read.size();
  }

  @Test
  void withTwoOfThreeReplicasDownAcksAllIsRefusedAndConsumersStillRead() throws Exception {
    // The followers stop by SIGTERM, a controlled shutdown that leaves the ISR at once: no short
    // session is needed, and a 2 s one can lapse on a loaded machine while the producer, which
    // must not retry here, sends its first records (seen beside a CPU hog)
    startCluster(Map.of("broker.session.timeout.ms", "9000"));
    createTopic("quorum", Map.of("min.insync.replicas", "2"));
    int leader = describe("quorum").leader().id();
    try (KafkaProducer<String, String> producer =
        producer(
            "all",
            Map.of(
                // NOT_ENOUGH_REPLICAS is retriable; without retries the client reports it as is
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                false,
                ProducerConfig.RETRIES_CONFIG,
                0))) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("quorum", "ok" + i)).get();
      }
      for (BrokerProcess broker : brokers.values()) {
        if (broker.id != leader) {
          broker.stop();
        }
      }
      eventually().until(() -> ids(describe("quorum").isr()).equals(List.of(leader)));

      // The leader's partition learns the ISR change just after the metadata shows it; a produce
      // in between is appended, then refused with NOT_ENOUGH_REPLICAS_AFTER_APPEND. No attempt
      // may ever succeed, and the refusal before the append must come within a few attempts.
      Throwable refused = null;
      for (int attempt = 0;
          attempt < 20 && !(refused instanceof NotEnoughReplicasException);
          attempt++) {
        Throwable thrown =
            catchThrowable(() -> producer.send(new ProducerRecord<>("quorum", "refused")).get());
        assertThat(thrown).isInstanceOf(ExecutionException.class);
        refused = thrown.getCause();
        assertThat(refused)
            .isInstanceOfAny(
                NotEnoughReplicasException.class, NotEnoughReplicasAfterAppendException.class);
      }
      assertThat(refused).isInstanceOf(NotEnoughReplicasException.class);
    }
    assertThat(readAll("quorum", 10, Duration.ofMillis(500))).hasSize(10);
  }

  @Test
  void killingTheControllerElectsAnotherAndTopicsCanStillBeCreated() throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "2000"));
    int controller = admin.describeCluster().controller().get().id();
    brokers.get(controller).kill();
    await()
        .atMost(WAIT)
        .until(
            () -> {
              Node now = admin.describeCluster().controller().get();
              return now != null && now.id() >= 0 && now.id() != controller;
            });
    admin.createTopics(List.of(new NewTopic("after", 2, (short) 2))).all().get();
    eventually().until(() -> describe("after").leader() != null);
  }

  @Test
  void whileEtcdIsDownPartitionsKeepServingAndMetadataChangesResumeWhenItReturns()
      throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "3000"));
    createTopic("steady", Map.of("min.insync.replicas", "2"));
    List<String> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      for (int i = 0; i < 10; i++) {
        sent.add("before" + i);
        producer.send(new ProducerRecord<>("steady", sent.get(sent.size() - 1))).get();
      }

      // etcd stays down longer than the broker session timeout
      etcd.stop();
      for (int i = 0; i < 10; i++) {
        sent.add("during" + i);
        producer.send(new ProducerRecord<>("steady", sent.get(sent.size() - 1))).get();
      }
      assertThat(readAll("steady", 20, Duration.ZERO))
          .extracting(ConsumerRecord::value)
          .containsExactlyElementsOf(sent);
      Thread.sleep(4000);
      assertThat(ids(describe("steady").isr())).containsExactly(0, 1, 2);

      // When it returns, the brokers are still registered and metadata changes go through
      etcd.start();
      createTopic("after", Map.of());
      for (int i = 0; i < 10; i++) {
        sent.add("after" + i);
        producer.send(new ProducerRecord<>("steady", sent.get(sent.size() - 1))).get();
      }
    }
    assertThat(readAll("steady", 30, Duration.ZERO))
        .extracting(ConsumerRecord::value)
        .containsExactlyElementsOf(sent);
    assertThat(admin.describeCluster().nodes().get()).hasSize(3);
  }

  @Test
  void withUncleanElectionOffAnOutOfSyncSurvivorStaysOfflineAndTurningItOnLosesRecords()
      throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "2000"));
    createTopic("unclean", Map.of());
    int leader = describe("unclean").leader().id();
    List<BrokerProcess> followers =
        brokers.values().stream().filter(broker -> broker.id != leader).toList();
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      producer.send(new ProducerRecord<>("unclean", "kept")).get();
      for (BrokerProcess follower : followers) {
        follower.stop();
      }
      eventually().until(() -> ids(describe("unclean").isr()).equals(List.of(leader)));
      // With min.insync.replicas 1 the leader alone acknowledges
      producer.send(new ProducerRecord<>("unclean", "only-on-the-leader")).get();
    }

    // When the leader dies and the out-of-sync followers return
    brokers.get(leader).kill();
    for (BrokerProcess follower : followers) {
      follower.start();
    }
    eventually().until(() -> admin.describeCluster().nodes().get().size() == 2);

    // Then with unclean election off (Kafka's default) the partition stays offline
    Thread.sleep(2000); // gives the controller time to elect, which it must not
    eventually().untilAsserted(() -> assertThat(describe("unclean").leader()).isNull());
    assertThat(describe("unclean").isr()).extracting(Node::id).containsExactly(leader);
    // Metadata says so as Kafka does: no leader, LEADER_NOT_AVAILABLE, the dead replica offline
    try (RawKafkaClient raw = new RawKafkaClient(followers.get(0).port)) {
      MetadataResponse metadata =
          (MetadataResponse)
              raw.send(new MetadataRequest.Builder(List.of("unclean"), false).build((short) 12));
      var partition = metadata.data().topics().find("unclean").partitions().get(0);
      assertThat(partition.errorCode()).isEqualTo(Errors.LEADER_NOT_AVAILABLE.code());
      assertThat(partition.leaderId()).isEqualTo(-1);
      assertThat(partition.leaderEpoch()).isPositive();
      assertThat(partition.offlineReplicas()).containsExactly(leader);
      assertThat(partition.replicaNodes()).hasSize(3);
    }

    // and turning it on elects a survivor, logs the possible loss, and loses the record
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, "unclean"),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("unclean.leader.election.enable", "true"),
                        AlterConfigOp.OpType.SET))))
        .all()
        .get();
    awaitLeaderOtherThan("unclean", leader);
    String logs = followers.get(0).log() + brokers.get(leader).log() + followers.get(1).log();
    assertThat(logs).contains("UNCLEAN leader election");
    assertThat(readAll("unclean", 1, Duration.ofMillis(500)))
        .extracting(ConsumerRecord::value)
        .containsExactly("kept");
  }

  @Test
  void sigtermMovesLeadershipAwayBeforeTheBrokerLeavesAndItRejoinsAfterARestart() throws Exception {
    startCluster(Map.of());
    createTopic("rolling", Map.of("min.insync.replicas", "2"));
    int leader = describe("rolling").leader().id();
    TopicPartition tp = new TopicPartition("rolling", 0);
    // What the metadata said, in order: is the old leader registered, who leads, the ISR
    record Seen(boolean registered, int leader, List<Integer> isr) {}
    List<Seen> history = new CopyOnWriteArrayList<>();
    List<String> sent = new ArrayList<>();
    try (MetadataStore watcher = MetadataStore.connect(List.of(etcd.endpoint()), "tidelog");
        KafkaProducer<String, String> producer = producer("all", Map.of())) {
      watcher.addListener(
          (image, delta) ->
              history.add(
                  new Seen(
                      image.brokers().containsKey(leader),
                      image.partitions().get(tp).leader(),
                      image.partitions().get(tp).isr())));
      for (int i = 0; i < 1000; i++) {
        sent.add("r" + i);
        producer.send(new ProducerRecord<>("rolling", sent.get(i)));
        if (i == 500) {
          producer.flush();
          brokers.get(leader).stop();
        }
      }
      producer.flush();
    }

    // The leadership moved and the ISR dropped the old leader while it was still registered and
    // serving, and no leader took it back into the ISR while it was shutting down
    List<Seen> whileRegistered = history.stream().filter(Seen::registered).toList();
    assertThat(whileRegistered)
        .as("metadata history %s", history)
        .anyMatch(seen -> seen.leader() != leader && !seen.isr().contains(leader));
    int dropped = 0;
    while (whileRegistered.get(dropped).isr().contains(leader)) {
      dropped++;
    }
    assertThat(whileRegistered.subList(dropped, whileRegistered.size()))
        .as("metadata history %s", history)
        .noneMatch(seen -> seen.isr().contains(leader));
    assertThat(describe("rolling").isr()).hasSize(2);
    assertMovedOffWithNothingLostThenRejoins("rolling", leader, sent);
  }

  @Test
  void aFollowerBehindTheLeadersLogStartRestartsFromItAndRejoinsTheIsr() throws Exception {
    startCluster(Map.of());
    createTopic("trimmed", Map.of());
    TopicPartition tp = new TopicPartition("trimmed", 0);
    int leader = describe("trimmed").leader().id();
    BrokerProcess follower =
        brokers.values().stream().filter(broker -> broker.id != leader).findFirst().orElseThrow();
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("trimmed", "r" + i)).get();
      }
      follower.stop();
      eventually().until(() -> !ids(describe("trimmed").isr()).contains(follower.id));
      for (int i = 10; i < 100; i++) {
        producer.send(new ProducerRecord<>("trimmed", "r" + i));
      }
      producer.flush();
    }
    // The leader's log now starts past everything the stopped follower has
    admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(80))).all().get();

    follower.start();
    eventually().until(() -> ids(describe("trimmed").isr()).contains(follower.id));
  }

  /**
   * KIP-73's follower throttle: a follower listed in its topic's {@code
   * follower.replication.throttled.replicas}, behind after a restart, fetches at its broker's
   * {@code follower.replication.throttled.rate}, so that 2 MB at 100 kB/s take it about 20 s to
   * catch up (unthrottled, well under 1 s here); it rejoins the ISR afterwards.
   */
  @Test
  void aThrottledFollowerCatchesUpAtItsBrokersRateAndThenRejoinsTheIsr() throws Exception {
    assertCatchesUpUnderTheThrottleOf("follower");
  }

  /**
   * KIP-73's leader throttle: a leader listed in its topic's {@code
   * leader.replication.throttled.replicas} sends a follower out of the ISR at most its {@code
   * leader.replication.throttled.rate}; what it withholds does not end the follower's long poll.
   */
  @Test
  void aThrottledLeaderSendsAFollowerOutOfTheIsrAtItsRate() throws Exception {
    assertCatchesUpUnderTheThrottleOf("leader");
  }

  /**
   * A follower restarted 2 MB behind catches up at no more than 100 kB/s, the rate of the {@code
   * side} ({@code leader} or {@code follower}) throttle on the broker of that side, and rejoins the
   * ISR. The time counts from before the follower starts: it fetches before it is ready, and its
   * start takes longest on a loaded machine, which a clock started after it missed; the 20 s the
   * throttle needs keep a start of a few seconds from hiding an unthrottled catch-up.
   */
  private void assertCatchesUpUnderTheThrottleOf(String side) throws Exception {
    // 64 KiB a fetch, so that the throttle, checked at each fetch, can hold to 100 kB/s
    startCluster(Map.of("replica.fetch.max.bytes", "65536"));
    createTopic("throttled", Map.of(side + ".replication.throttled.replicas", "*"));
    int leader = describe("throttled").leader().id();
    BrokerProcess follower =
        brokers.values().stream().filter(broker -> broker.id != leader).findFirst().orElseThrow();
    BrokerProcess throttling = side.equals("leader") ? brokers.get(leader) : follower;
    long rate = 100_000;
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(throttling.id)),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry(side + ".replication.throttled.rate", String.valueOf(rate)),
                        AlterConfigOp.OpType.SET))))
        .all()
        .get();
    follower.stop();
    eventually().until(() -> !ids(describe("throttled").isr()).contains(follower.id));
    int records = 200;
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      String value = "x".repeat(10_000);
      for (int i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>("throttled", value));
      }
      producer.flush();
    }

    long started = System.nanoTime();
    follower.start();
    await()
        .atMost(Duration.ofMinutes(2))
        .ignoreExceptions()
        .until(() -> ids(describe("throttled").isr()).contains(follower.id));
    double seconds = (System.nanoTime() - started) / 1e9;
    double throttled =
        Scrape.of(throttling.httpPort)
            .value("tidelog_replication_throttled_bytes_total", "side", side);
    // the leader counts what the in-sync follower fetched too, as Kafka's leader throttle does
    long behind = records * 10_000L;
    assertThat(throttled).as("bytes the throttle counted").isGreaterThanOrEqualTo(behind);
    // the windows let about one more second's worth through at the start
    assertThat(seconds)
        .as("%.1f s to catch up %d bytes at %d B/s", seconds, behind, rate)
        .isGreaterThanOrEqualTo((double) behind / rate - 2.5);
  }

  @Test
  void aLeaderPausedPastItsSessionIsReplacedThenResignsRegistersAgainAndRejoins() throws Exception {
    startCluster(Map.of("broker.session.timeout.ms", "2000"));
    createTopic("zombie", Map.of("min.insync.replicas", "2"));
    int leader = describe("zombie").leader().id();

    // A long GC pause: its lease expires and another ISR member leads
    brokers.get(leader).pause();
    awaitLeaderOtherThan("zombie", leader);

    // Resumed, it learns it lost its registration, stops leading, registers again and rejoins
    brokers.get(leader).resume();
    eventually().until(() -> ids(describe("zombie").isr()).contains(leader));
    assertThat(brokers.get(leader).log()).contains("lost its registration");
    assertThat(describe("zombie").leader().id()).isNotEqualTo(leader);
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      producer.send(new ProducerRecord<>("zombie", "after")).get();
    }
    assertThat(readAll("zombie", 1, Duration.ofMillis(300)))
        .extracting(ConsumerRecord::value)
        .containsExactly("after");
  }

  @Test
  void leadershipReturnsToThePreferredReplicaAfterItComesBack() throws Exception {
    startCluster(
        Map.of(
            "broker.session.timeout.ms", "2000", "leader.imbalance.check.interval.seconds", "1"));
    createTopic("preferred", Map.of());
    TopicPartitionInfo partition = describe("preferred");
    int preferred = partition.replicas().get(0).id();
    assertThat(partition.leader().id()).isEqualTo(preferred);

    brokers.get(preferred).kill();
    awaitLeaderOtherThan("preferred", preferred);

    brokers.get(preferred).start();
    eventually().until(() -> describe("preferred").leader().id() == preferred);
  }

  @Test
  void adminRequestsWorkOnABrokerThatIsNotTheControllerAndDeletionRemovesEveryReplica()
      throws Exception {
    startCluster(Map.of());
    int controller = admin.describeCluster().controller().get().id();
    BrokerProcess other =
        brokers.values().stream().filter(b -> b.id != controller).findFirst().orElseThrow();
    CreatableTopicCollection topics = new CreatableTopicCollection();
    topics.add(
        new CreatableTopic()
            .setName("anywhere")
            .setNumPartitions(1)
            .setReplicationFactor((short) 3));
    try (RawKafkaClient raw = new RawKafkaClient(other.port)) {
      // Kafka's Admin sends these to the controller; any Tidelog broker takes them
      CreateTopicsResponse created =
          (CreateTopicsResponse)
              raw.send(
                  new CreateTopicsRequest.Builder(
                          new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(10_000))
                      .build((short) 7));
      assertThat(created.data().topics().find("anywhere").errorCode()).isZero();
      CreatePartitionsTopicCollection grow = new CreatePartitionsTopicCollection();
      grow.add(new CreatePartitionsTopic().setName("anywhere").setCount(2).setAssignments(null));
      CreatePartitionsResponse grown =
          (CreatePartitionsResponse)
              raw.send(
                  new CreatePartitionsRequest.Builder(
                          new CreatePartitionsRequestData().setTopics(grow).setTimeoutMs(10_000))
                      .build((short) 3));
      assertThat(grown.data().results().get(0).errorCode()).isZero();
      eventually()
          .untilAsserted(
              () ->
                  assertThat(brokers.keySet())
                      .allSatisfy(
                          id ->
                              assertThat(dir.resolve("broker-" + id + "/data/anywhere-1"))
                                  .isDirectory()));

      DeleteTopicsResponse deleted =
          (DeleteTopicsResponse)
              raw.send(
                  new DeleteTopicsRequest.Builder(
                          new DeleteTopicsRequestData()
                              .setTopics(List.of(new DeleteTopicState().setName("anywhere")))
                              .setTimeoutMs(10_000))
                      .build((short) 6));
      assertThat(deleted.data().responses().find("anywhere").errorCode()).isZero();
    }
    eventually()
        .untilAsserted(
            () ->
                assertThat(brokers.keySet())
                    .allSatisfy(
                        id -> {
                          assertThat(dir.resolve("broker-" + id + "/data/anywhere-0"))
                              .doesNotExist();
                          assertThat(dir.resolve("broker-" + id + "/data/anywhere-1"))
                              .doesNotExist();
                        }));
  }

  @Test
  void aBrokerThatCannotBindItsPortExitsAndLeavesNoRegistration() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      BrokerProcess broker =
          new BrokerProcess(
              0,
              dir.resolve("broker-0"),
              etcd.endpoint(),
              Map.of("listeners", "PLAINTEXT://127.0.0.1:" + taken.getLocalPort()));
      brokers.put(0, broker);

      assertThat(catchThrowable(broker::start)).hasMessageContaining("exited with 1");
    }
    assertThat(brokers.get(0).log()).contains("Address already in use");
    try (MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "tidelog")) {
      assertThat(store.image().brokers()).isEmpty();
    }
  }

  @Test
  void aLeaderRestartedAloneBelowMinIsrStillServesWhatWasCommitted() throws Exception {
    startCluster(Map.of());
    createTopic("alone", Map.of("min.insync.replicas", "2"));
    int leader = describe("alone").leader().id();
    try (KafkaProducer<String, String> producer = producer("all", Map.of())) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("alone", "c" + i)).get();
      }
    }
    for (BrokerProcess broker : brokers.values()) {
      if (broker.id != leader) {
        broker.stop();
      }
    }
    brokers.get(leader).stop();

    // Back alone, it leads with an ISR below the minimum: its HW cannot move, but it knows it
    brokers.get(leader).start();
    eventually().until(() -> describe("alone").leader() != null);
    assertThat(highWatermark("alone")).isEqualTo(10);
    assertThat(readAll("alone", 10, Duration.ZERO)).hasSize(10);
  }
}
