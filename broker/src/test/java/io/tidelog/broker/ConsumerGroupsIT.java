package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.config.BrokerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Consumer groups on one broker, judged by kafka-clients' consumer and Admin: the seeds' queue and
 * publish-subscribe modes, rebalances under every assignor, committed offsets that survive the
 * consumer and the broker, and rewinds.
 */
class ConsumerGroupsIT {
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir static Path dir;
  static EtcdServer etcd;
  static TestBroker broker;
  static Admin admin;

  private final List<KafkaConsumer<String, String>> consumers = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdServer.start(Files.createDirectory(dir.resolve("etcd")));
    broker = startBroker();
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
  }

  private static TestBroker startBroker() throws Exception {
    return TestBroker.start(
        dir.resolve("logs"),
        Map.of(
            BrokerConfig.ETCD_ENDPOINTS,
            etcd.endpoint(),
            "auto.create.topics.enable",
            "false",
            "offsets.topic.num.partitions",
            "5",
            "group.initial.rebalance.delay.ms",
            "0",
            "group.min.session.timeout.ms",
            "1000"));
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    broker.close();
    etcd.close();
  }

  @AfterEach
  void closeConsumers() {
    consumers.forEach(c -> c.close(CloseOptions.timeout(Duration.ofSeconds(5))));
  }

  private KafkaConsumer<String, String> consumer(String group, Map<String, String> overrides) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "3000");
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    p.putAll(overrides);
    KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    consumers.add(consumer);
    return consumer;
  }

  private static void createTopic(String name, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
  }

  /** Values {@code prefix-0..count-1}, spread over the partitions in turn. */
  private static Set<String> produce(String topic, int partitions, String prefix, int count) {
    Set<String> values = new HashSet<>();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < count; i++) {
        String value = prefix + "-" + i;
        producer.send(new ProducerRecord<>(topic, i % partitions, null, value));
        values.add(value);
      }
      producer.flush();
    }
    return values;
  }

  /** Polls every consumer in turn, from this one thread, until {@code done} or a minute passes. */
  private static void pollUntil(
      Collection<KafkaConsumer<String, String>> group,
      Map<KafkaConsumer<String, String>, List<String>> received,
      BooleanSupplier done) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("polling timed out").isLessThan(deadline);
      for (KafkaConsumer<String, String> c : group) {
        c.poll(POLL)
            .forEach(r -> received.computeIfAbsent(c, k -> new ArrayList<>()).add(r.value()));
      }
    }
  }

  private static boolean assigned(List<KafkaConsumer<String, String>> group, int... sizes) {
    for (int i = 0; i < sizes.length; i++) {
      if (group.get(i).assignment().size() != sizes[i]) {
        return false;
      }
    }
    return true;
  }

  @Test
  void queueModeDeliversEachMessageToExactlyOneConsumerOfTheGroup() throws Exception {
    // Given a group of 3 consumers over 6 partitions, each owning 2
    createTopic("queue", 6);
    List<KafkaConsumer<String, String>> group =
        List.of(
            consumer("workers", Map.of()),
            consumer("workers", Map.of()),
            consumer("workers", Map.of()));
    group.forEach(c -> c.subscribe(List.of("queue")));
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();
    pollUntil(group, received, () -> assigned(group, 2, 2, 2));

    // When 600 messages are produced
    Set<String> sent = produce("queue", 6, "job", 600);

    // Then each reaches exactly one consumer, and every consumer gets some
    pollUntil(group, received, () -> received.values().stream().mapToInt(List::size).sum() >= 600);
    List<String> all = received.values().stream().flatMap(List::stream).toList();
    assertThat(all).hasSize(600).doesNotHaveDuplicates();
    assertThat(new HashSet<>(all)).isEqualTo(sent);
    assertThat(received).hasSize(3);
    Set<TopicPartition> owned = new HashSet<>();
    group.forEach(c -> owned.addAll(c.assignment()));
    assertThat(owned).hasSize(6);
  }

  @Test
  void publishSubscribeDeliversEveryMessageToEveryGroup() throws Exception {
    // Given 3 groups of one consumer each on one topic
    createTopic("news", 3);
    List<KafkaConsumer<String, String>> groups =
        IntStream.range(0, 3).mapToObj(i -> consumer("reader-" + i, Map.of())).toList();
    groups.forEach(c -> c.subscribe(List.of("news")));
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();
    pollUntil(groups, received, () -> assigned(groups, 3, 3, 3));

    // When 300 messages are produced
    Set<String> sent = produce("news", 3, "story", 300);

    // Then every group receives every message once
    pollUntil(
        groups,
        received,
        () -> groups.stream().allMatch(c -> received.getOrDefault(c, List.of()).size() >= 300));
    for (KafkaConsumer<String, String> c : groups) {
      assertThat(received.get(c)).hasSize(300).doesNotHaveDuplicates();
      assertThat(new HashSet<>(received.get(c))).isEqualTo(sent);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"range", "roundrobin", "cooperative-sticky"})
  void rebalancesOnJoinLeaveAndCrashNeverShareAPartitionWithinAGeneration(String assignor)
      throws Exception {
    String topic = "rebalance-" + assignor;
    String groupId = "rebalancing-" + assignor;
    createTopic(topic, 6);
    String assignorClass =
        switch (assignor) {
          case "range" -> RangeAssignor.class.getName();
          case "roundrobin" -> RoundRobinAssignor.class.getName();
          default -> CooperativeStickyAssignor.class.getName();
        };
    Map<String, String> config =
        Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass);
    OwnershipLog ownership = new OwnershipLog();
    List<KafkaConsumer<String, String>> members = new ArrayList<>();
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();

    // Join: one member owns all 6; a second makes 3 + 3; a third makes 2 + 2 + 2
    for (int n = 1; n <= 3; n++) {
      KafkaConsumer<String, String> member = consumer(groupId, config);
      member.subscribe(List.of(topic));
      members.add(member);
      int[] sizes = IntStream.range(0, n).map(i -> 6 / members.size()).toArray();
      pollUntil(members, received, () -> ownership.sample(members) && assigned(members, sizes));
    }
    String generationsSeen = ownership.generations();

    // Leave: the third closes (LeaveGroup), the two left own 3 + 3
    members.remove(2).close();
    pollUntil(members, received, () -> ownership.sample(members) && assigned(members, 3, 3));

    // Crash: the second vanishes without leaving; after its session timeout the first owns all
    KafkaConsumer<String, String> crashed = members.remove(1);
    consumers.remove(crashed);
    crashed.close(
        CloseOptions.groupMembershipOperation(
            CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
    pollUntil(members, received, () -> ownership.sample(members) && assigned(members, 6));

    // Then no partition had two owners within one generation, over at least 5 generations
    ownership.assertNoSharedPartitions();
    assertThat(ownership.generationCount()).as(generationsSeen).isGreaterThanOrEqualTo(5);
    assertThat(members.get(0).groupMetadata().generationId()).isGreaterThan(0);
  }

  /** What each member owned, by the generation it reported, sampled after every poll. */
  private static final class OwnershipLog {
    private final Map<Integer, Map<String, Set<TopicPartition>>> byGeneration = new HashMap<>();

    boolean sample(List<KafkaConsumer<String, String>> members) {
      for (KafkaConsumer<String, String> m : members) {
        var meta = m.groupMetadata();
        if (meta.generationId() > 0) {
          byGeneration
              .computeIfAbsent(meta.generationId(), g -> new HashMap<>())
              .computeIfAbsent(meta.memberId(), id -> new HashSet<>())
              .addAll(m.assignment());
        }
      }
      return true;
    }

    int generationCount() {
      return byGeneration.size();
    }

    String generations() {
      return byGeneration.toString();
    }

    void assertNoSharedPartitions() {
      byGeneration.forEach(
          (generation, owners) -> {
            Map<TopicPartition, Long> counts =
                owners.values().stream()
                    .flatMap(Set::stream)
                    .collect(Collectors.groupingBy(tp -> tp, Collectors.counting()));
            assertThat(counts.values())
                .as("owners per partition in generation %d: %s", generation, owners)
                .allMatch(c -> c == 1);
          });
    }
  }

  @Test
  void committedOffsetsResumeAConsumerAndSurviveABrokerRestart() throws Exception {
    // Given 20 records, of which a consumer commits the first 5
    createTopic("resume", 1);
    produce("resume", 1, "r", 20);
    TopicPartition tp = new TopicPartition("resume", 0);
    KafkaConsumer<String, String> first = consumer("resumers", Map.of());
    first.subscribe(List.of("resume"));
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();
    pollUntil(List.of(first), received, () -> received.getOrDefault(first, List.of()).size() >= 20);
    first.commitSync(Map.of(tp, new OffsetAndMetadata(5, "five")));
    first.close();
    consumers.remove(first);

    // When a new consumer of the group starts, it resumes at 5
    KafkaConsumer<String, String> second = consumer("resumers", Map.of());
    second.subscribe(List.of("resume"));
    List<String> resumed = new ArrayList<>();
    pollUntil(List.of(second), new HashMap<>(Map.of(second, resumed)), () -> resumed.size() >= 15);
    assertThat(resumed.get(0)).isEqualTo("r-5");
    assertThat(resumed).hasSize(15);

    // And rewinds with seek
    second.seek(tp, 2);
    List<String> rewound = new ArrayList<>();
    pollUntil(List.of(second), new HashMap<>(Map.of(second, rewound)), () -> rewound.size() >= 18);
    assertThat(rewound.get(0)).isEqualTo("r-2");
    second.close();
    consumers.remove(second);

    // When the broker restarts, the commit is still there, loaded from __consumer_offsets
    broker.close();
    broker = startBroker();
    try (Admin restarted =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
      Map<TopicPartition, OffsetAndMetadata> committed =
          await()
              .atMost(WAIT)
              .ignoreExceptions()
              .until(
                  () ->
                      restarted
                          .listConsumerGroupOffsets("resumers")
                          .partitionsToOffsetAndMetadata()
                          .get(),
                  m -> m.containsKey(tp));
      assertThat(committed.get(tp).offset()).isEqualTo(5);
      assertThat(committed.get(tp).metadata()).isEqualTo("five");
    } finally {
      admin.close();
      admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
    }
  }

  @Test
  void aStaticMemberThatRestartsWithinItsSessionKeepsItsPartitionsWithoutARebalance()
      throws Exception {
    // Given two static members (group.instance.id) sharing 4 partitions
    createTopic("static", 4);
    Map<String, String> a =
        Map.of(
            ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-a",
            ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    Map<String, String> b =
        Map.of(
            ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-b",
            ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    KafkaConsumer<String, String> first = consumer("statics", a);
    KafkaConsumer<String, String> second = consumer("statics", b);
    first.subscribe(List.of("static"));
    second.subscribe(List.of("static"));
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();
    pollUntil(List.of(first, second), received, () -> assigned(List.of(first, second), 2, 2));
    int generation = first.groupMetadata().generationId();
    Set<TopicPartition> ownedBySecond = Set.copyOf(second.assignment());

    // When the second restarts (a static member leaves no LeaveGroup behind)
    second.close();
    consumers.remove(second);
    KafkaConsumer<String, String> again = consumer("statics", b);
    again.subscribe(List.of("static"));
    pollUntil(List.of(first, again), received, () -> again.assignment().size() == 2);

    // Then it has its partitions back, in the same generation: nobody rebalanced
    assertThat(again.assignment()).isEqualTo(ownedBySecond);
    assertThat(again.groupMetadata().generationId()).isEqualTo(generation);
    assertThat(first.groupMetadata().generationId()).isEqualTo(generation);
    assertThat(first.assignment()).hasSize(2);
  }

  @Test
  void theBrokerComputesEachGroupsLagPerPartition() throws Exception {
    // Given 10 records in each of 2 partitions, and a group that committed 4 and 10 of them
    createTopic("lagging", 2);
    produce("lagging", 2, "l", 20);
    KafkaConsumer<String, String> member = consumer("laggards", Map.of());
    member.commitSync(
        Map.of(
            new TopicPartition("lagging", 0), new OffsetAndMetadata(4),
            new TopicPartition("lagging", 1), new OffsetAndMetadata(10)));

    // When the coordinator is asked for lag
    java.net.http.HttpResponse<String> lag =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + broker.httpPort + "/lag"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());

    // Then each committed partition shows its end offset minus the committed offset
    assertThat(lag.statusCode()).isEqualTo(200);
    assertThat(lag.body().lines())
        .contains("laggards lagging 0 4 10 6", "laggards lagging 1 10 10 0");
  }

  @Test
  void adminListsDescribesRewindsAndDeletesGroups() throws Exception {
    // Given a stable group of one consumer that committed offset 10
    createTopic("admin-groups", 2);
    produce("admin-groups", 2, "a", 20);
    KafkaConsumer<String, String> member = consumer("audited", Map.of("client.id", "auditor"));
    member.subscribe(List.of("admin-groups"));
    Map<KafkaConsumer<String, String>, List<String>> received = new HashMap<>();
    pollUntil(
        List.of(member), received, () -> received.getOrDefault(member, List.of()).size() >= 20);
    TopicPartition p0 = new TopicPartition("admin-groups", 0);
    member.commitSync(Map.of(p0, new OffsetAndMetadata(10)));

    // Then Admin lists and describes it, with its member and assignment
    Collection<GroupListing> listed = admin.listGroups().all().get();
    assertThat(listed).anyMatch(g -> g.groupId().equals("audited"));
    ConsumerGroupDescription described =
        admin.describeConsumerGroups(List.of("audited")).all().get().get("audited");
    assertThat(described.groupState()).isEqualTo(GroupState.STABLE);
    assertThat(described.members()).hasSize(1);
    assertThat(described.members().iterator().next().clientId()).isEqualTo("auditor");
    assertThat(described.members().iterator().next().host()).isEqualTo("/127.0.0.1");
    assertThat(described.members().iterator().next().assignment().topicPartitions()).hasSize(2);

    // And a live group can be neither rewound nor deleted
    ExecutionException busy =
        assertThrows(
            ExecutionException.class,
            () -> admin.deleteConsumerGroups(List.of("audited")).all().get());
    assertThat(busy.getCause()).isInstanceOf(GroupNotEmptyException.class);
    assertThrows(
        ExecutionException.class,
        () ->
            admin
                .alterConsumerGroupOffsets("audited", Map.of(p0, new OffsetAndMetadata(0)))
                .all()
                .get());

    // When the member leaves, Admin rewinds the group to 3, and the next consumer starts there
    member.close();
    consumers.remove(member);
    admin.alterConsumerGroupOffsets("audited", Map.of(p0, new OffsetAndMetadata(3))).all().get();
    assertThat(
            admin
                .listConsumerGroupOffsets("audited")
                .partitionsToOffsetAndMetadata()
                .get()
                .get(p0)
                .offset())
        .isEqualTo(3);
    KafkaConsumer<String, String> next = consumer("audited", Map.of());
    next.assign(List.of(p0));
    List<String> read = new ArrayList<>();
    pollUntil(List.of(next), new HashMap<>(Map.of(next, read)), () -> !read.isEmpty());
    assertThat(next.position(p0)).isGreaterThan(3);
    assertThat(read.get(0)).isEqualTo("a-6"); // the 4th record of partition 0 (values 0, 2, 4, 6)
    next.close();
    consumers.remove(next);

    // And deletes its offsets, then the group itself
    admin.deleteConsumerGroupOffsets("audited", Set.of(p0)).all().get();
    assertThat(admin.listConsumerGroupOffsets("audited").partitionsToOffsetAndMetadata().get())
        .doesNotContainKey(p0);
    admin.deleteConsumerGroups(List.of("audited")).all().get();
    assertThat(admin.listGroups().all().get()).noneMatch(g -> g.groupId().equals("audited"));
  }

  @Test
  void badRequestsGetKafkaErrorsAndTheBrokerKeepsServing() throws Exception {
    createTopic("guarded", 1);
    // A session timeout below group.min.session.timeout.ms
    KafkaConsumer<String, String> impatient =
        consumer(
            "impatient",
            Map.of(
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "500",
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "100"));
    impatient.subscribe(List.of("guarded"));
    assertThrows(
        InvalidSessionTimeoutException.class, () -> impatient.poll(Duration.ofSeconds(10)));

    // A commit for a topic that does not exist (kafka-clients retries this error, so ask directly)
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      OffsetCommitRequestData commit =
          new OffsetCommitRequestData()
              .setGroupId("lost")
              .setGenerationIdOrMemberEpoch(-1)
              .setMemberId("")
              .setTopics(
                  List.of(
                      new OffsetCommitRequestTopic()
                          .setName("no-such-topic")
                          .setPartitions(
                              List.of(
                                  new OffsetCommitRequestPartition()
                                      .setPartitionIndex(0)
                                      .setCommittedOffset(1)))));
      OffsetCommitResponse response =
          (OffsetCommitResponse)
              client.send(OffsetCommitRequest.Builder.forTopicNames(commit).build((short) 8));
      assertThat(response.data().topics().get(0).partitions().get(0).errorCode())
          .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    // A producer writing into __consumer_offsets
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      ExecutionException refused =
          assertThrows(
              ExecutionException.class,
              () -> producer.send(new ProducerRecord<>("__consumer_offsets", 0, "k", "v")).get());
      assertThat(refused.getCause()).isInstanceOf(InvalidTopicException.class);
    }

    // And the broker still serves a group
    KafkaConsumer<String, String> lost = consumer("lost", Map.of());
    lost.commitSync(Map.of(new TopicPartition("guarded", 0), new OffsetAndMetadata(0)));
    assertThat(lost.committed(Set.of(new TopicPartition("guarded", 0)))).isNotEmpty();
  }
}
