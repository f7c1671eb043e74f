package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsAssignment;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopicCollection;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignment;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignmentCollection;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfig;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfigCollection;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Malformed and manual admin requests, sent as raw frames to Apache Kafka 4.1 and to Tidelog (both
 * one broker, node 1), must get the same error code for every topic, and the same topics must exist
 * afterwards: duplicate names, invalid names, invalid configs, impossible replication factors and
 * partition counts, {@code validateOnly}, manual replica assignments (issue 20). Each case is a
 * row: a request and the topics it names.
 */
class AdminDifferentialIT {
  private static final AtomicInteger BARRIERS = new AtomicInteger();
  @TempDir static Path kafkaDir;
  @TempDir static Path tidelogDir;
  static ApacheKafka kafka;
  static TestBroker tidelog;

  @BeforeAll
  static void start() throws Exception {
    kafka = ApacheKafka.start(kafkaDir);
    tidelog = TestBroker.start(tidelogDir, Map.of("node.id", "1"));
    for (int port : ports()) {
      try (Admin admin = admin(port)) {
        admin
            .createTopics(
                List.of(
                    new NewTopic("existing", 1, (short) 1), new NewTopic("grown", 1, (short) 1)))
            .all()
            .get();
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    try (ApacheKafka k = kafka;
        TestBroker t = tidelog) {
      // both closed
    }
  }

  private static List<Integer> ports() {
    return List.of(kafka.port, tidelog.port);
  }

  private static Admin admin(int port) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port));
  }

  /** What a client sees of a request, and of the topics it names afterwards. */
  record View(List<String> results, Set<String> existing) {}

  /**
   * Sends {@code request} to Kafka and to Tidelog; requires the same error code per result (in
   * order of name) and the same of {@code names} to exist afterwards; returns Tidelog's view.
   */
  private static <R extends AbstractResponse> View same(
      AbstractRequest request, Function<R, List<String>> results, String... names)
      throws Exception {
    return same(port -> request, results, names);
  }

  /** As {@link #same(AbstractRequest, Function, String...)}, with a request made for each port. */
  private static <R extends AbstractResponse> View same(
      IntFunction<AbstractRequest> request, Function<R, List<String>> results, String... names)
      throws Exception {
    List<View> views = new ArrayList<>();
    for (int port : ports()) {
      List<String> answered;
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        @SuppressWarnings("unchecked")
        R response = (R) client.send(request.apply(port));
        answered = results.apply(response).stream().sorted().toList();
      }
      Set<String> existing;
      try (Admin admin = admin(port)) {
        existing = new java.util.TreeSet<>(settledTopics(admin));
      }
      existing.retainAll(Set.of(names));
      views.add(new View(answered, existing));
    }
    assertThat(views.get(1)).as("Tidelog's answer, against Apache Kafka's").isEqualTo(views.get(0));
    return views.get(1);
  }

  /**
   * The topics a broker lists once what it answered before is in its metadata: Kafka answers
   * CreateTopics once its controller committed, and its broker's metadata follows, so a topic of a
   * request may be missing from a listing made just after. A barrier topic created after it and
   * seen listed shows the metadata has passed the request.
   */
  private static Set<String> settledTopics(Admin admin) throws Exception {
    String barrier = "barrier-" + BARRIERS.incrementAndGet();
    admin.createTopics(List.of(new NewTopic(barrier, 1, (short) 1))).all().get();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> admin.listTopics().names().get().contains(barrier));
    return admin.listTopics().names().get();
  }

  private static List<String> created(CreateTopicsResponse response) {
    return response.data().topics().stream()
        .map(t -> t.name() + " " + Errors.forCode(t.errorCode()))
        .toList();
  }

  private static List<String> grown(CreatePartitionsResponse response) {
    return response.data().results().stream()
        .map(t -> t.name() + " " + Errors.forCode(t.errorCode()))
        .toList();
  }

  private static CreatableTopic topic(String name, int partitions, int replicationFactor) {
    return new CreatableTopic()
        .setName(name)
        .setNumPartitions(partitions)
        .setReplicationFactor((short) replicationFactor);
  }

  private static CreatableTopic withConfig(CreatableTopic topic, String key, String value) {
    CreatableTopicConfigCollection configs = new CreatableTopicConfigCollection();
    configs.add(new CreatableTopicConfig().setName(key).setValue(value));
    return topic.setConfigs(configs);
  }

  /** A topic of a manual assignment: partition i on the brokers of {@code replicas[i]}. */
  private static CreatableTopic assigned(
      String name, int[] partitions, List<List<Integer>> replicas) {
    CreatableReplicaAssignmentCollection assignments = new CreatableReplicaAssignmentCollection();
    for (int i = 0; i < partitions.length; i++) {
      assignments.add(
          new CreatableReplicaAssignment()
              .setPartitionIndex(partitions[i])
              .setBrokerIds(replicas.get(i)));
    }
    return topic(name, -1, -1).setAssignments(assignments);
  }

  @Test
  void aNameGivenTwiceIsRefusedOnceAndTheOthersAreCreated() throws Exception {
    View view =
        same(
            KafkaDifferentialIT.createTopics(
                false, topic("dup-a", 1, 1), topic("dup-b", 1, 1), topic("dup-b", 1, 1)),
            AdminDifferentialIT::created,
            "dup-a",
            "dup-b");
    assertThat(view.results()).containsExactly("dup-a NONE", "dup-b INVALID_REQUEST");
    assertThat(view.existing()).containsExactly("dup-a");
  }

  @Test
  void invalidNamesConfigsAndSizesAreRefusedPerTopic() throws Exception {
    View view =
        same(
            KafkaDifferentialIT.createTopics(
                false,
                topic("", 1, 1),
                topic("bad name", 1, 1),
                topic(".", 1, 1),
                topic("..", 1, 1),
                topic("x".repeat(250), 1, 1),
                withConfig(topic("cfg-value", 1, 1), "retention.ms", "soon"),
                withConfig(topic("cfg-unknown", 1, 1), "no.such.config", "1"),
                withConfig(topic("cfg-range", 1, 1), "min.insync.replicas", "0"),
                topic("rf-large", 1, 3),
                topic("rf-zero", 1, 0),
                topic("rf-negative", 1, -2),
                topic("partitions-zero", 0, 1),
                topic("partitions-negative", -2, 1),
                topic("existing", 1, 1),
                topic("defaults", -1, -1),
                topic("fine", 2, 1)),
            AdminDifferentialIT::created,
            "cfg-value",
            "rf-large",
            "partitions-zero",
            "defaults",
            "fine");
    assertThat(view.results())
        .contains(
            " INVALID_TOPIC_EXCEPTION",
            "bad name INVALID_TOPIC_EXCEPTION",
            "cfg-value INVALID_CONFIG",
            "cfg-unknown INVALID_CONFIG",
            "rf-large INVALID_REPLICATION_FACTOR",
            "partitions-zero INVALID_PARTITIONS",
            "existing TOPIC_ALREADY_EXISTS",
            "fine NONE");
    assertThat(view.existing()).containsExactlyInAnyOrder("defaults", "fine");
  }

  @Test
  void validateOnlyAnswersAsACreationWouldAndCreatesNothing() throws Exception {
    View view =
        same(
            KafkaDifferentialIT.createTopics(
                true,
                topic("vo-fine", 3, 1),
                topic("vo-zero", 0, 1),
                topic("vo-large", 1, 2),
                topic("existing", 1, 1),
                assigned("vo-assigned", new int[] {0}, List.of(List.of(1)))),
            AdminDifferentialIT::created,
            "vo-fine",
            "vo-assigned");
    assertThat(view.results()).contains("vo-fine NONE", "existing TOPIC_ALREADY_EXISTS");
    assertThat(view.existing()).isEmpty();
  }

  @Test
  void manualAssignmentsAreCheckedAsKafkasControllerChecksThem() throws Exception {
    View view =
        same(
            KafkaDifferentialIT.createTopics(
                false,
                assigned("ma-fine", new int[] {0, 1}, List.of(List.of(1), List.of(1))),
                assigned("ma-rf-set", new int[] {0}, List.of(List.of(1)))
                    .setReplicationFactor((short) 1),
                assigned("ma-partitions-set", new int[] {0}, List.of(List.of(1)))
                    .setNumPartitions(1),
                assigned("ma-gap", new int[] {0, 2}, List.of(List.of(1), List.of(1))),
                assigned("ma-unknown-broker", new int[] {0}, List.of(List.of(7))),
                assigned("ma-twice", new int[] {0}, List.of(List.of(1, 1))),
                assigned("ma-empty", new int[] {0}, List.of(List.of()))),
            AdminDifferentialIT::created,
            "ma-fine",
            "ma-gap",
            "ma-unknown-broker");
    assertThat(view.results())
        .contains(
            "ma-fine NONE",
            "ma-rf-set INVALID_REQUEST",
            "ma-gap INVALID_REPLICA_ASSIGNMENT",
            "ma-unknown-broker INVALID_REPLICA_ASSIGNMENT",
            "ma-twice INVALID_REPLICA_ASSIGNMENT",
            "ma-empty INVALID_REPLICA_ASSIGNMENT");
    assertThat(view.existing()).containsExactly("ma-fine");
    try (Admin admin = admin(tidelog.port)) {
      assertThat(
              admin
                  .describeTopics(List.of("ma-fine"))
                  .allTopicNames()
                  .get()
                  .get("ma-fine")
                  .partitions())
          .hasSize(2)
          .allSatisfy(p -> assertThat(p.replicas()).extracting(n -> n.id()).containsExactly(1));
    }
  }

  private static CreatePartitionsRequest createPartitions(CreatePartitionsTopic... topics) {
    CreatePartitionsTopicCollection collection = new CreatePartitionsTopicCollection();
    for (CreatePartitionsTopic topic : topics) {
      collection.add(topic);
    }
    return new CreatePartitionsRequest.Builder(
            new CreatePartitionsRequestData().setTopics(collection).setTimeoutMs(30_000))
        .build((short) 3);
  }

  private static CreatePartitionsTopic grow(String name, int count, List<List<Integer>> replicas) {
    return new CreatePartitionsTopic()
        .setName(name)
        .setCount(count)
        .setAssignments(
            replicas == null
                ? null
                : replicas.stream()
                    .map(r -> new CreatePartitionsAssignment().setBrokerIds(r))
                    .toList());
  }

  @Test
  void createPartitionsRefusesPerTopicAndTakesManualAssignments() throws Exception {
    View view =
        same(
            createPartitions(
                grow("grown", 3, List.of(List.of(1), List.of(1))),
                grow("existing", 1, null),
                grow("existing", 1, null),
                grow("no-such-topic", 2, null),
                grow("dup-a", 0, null)),
            AdminDifferentialIT::grown,
            "grown");
    assertThat(view.results())
        .contains(
            "grown NONE", "existing INVALID_REQUEST", "no-such-topic UNKNOWN_TOPIC_OR_PARTITION");
    same(
        createPartitions(
            grow("grown", 3, null),
            grow("ma-fine", 4, List.of(List.of(1))),
            grow("defaults", 2, List.of(List.of(7))),
            grow("fine", 3, List.of(List.of(1, 1)))),
        AdminDifferentialIT::grown);
  }

  /** A value other than the default for each of Kafka 4.1's 33 topic configs. */
  static final Map<String, String> EVERY_TOPIC_CONFIG =
      Map.ofEntries(
          Map.entry("cleanup.policy", "compact"),
          Map.entry("compression.gzip.level", "5"),
          Map.entry("compression.lz4.level", "10"),
          Map.entry("compression.type", "gzip"),
          Map.entry("compression.zstd.level", "5"),
          Map.entry("delete.retention.ms", "3600000"),
          Map.entry("file.delete.delay.ms", "30000"),
          Map.entry("flush.messages", "10000"),
          Map.entry("flush.ms", "60000"),
          Map.entry("follower.replication.throttled.replicas", "0:1"),
          Map.entry("index.interval.bytes", "8192"),
          Map.entry("leader.replication.throttled.replicas", "0:1"),
          Map.entry("local.retention.bytes", "-2"),
          Map.entry("local.retention.ms", "-2"),
          Map.entry("max.compaction.lag.ms", "86400000"),
          Map.entry("max.message.bytes", "2097152"),
          Map.entry("message.timestamp.after.max.ms", "7200000"),
          Map.entry("message.timestamp.before.max.ms", "86400000"),
          Map.entry("message.timestamp.type", "LogAppendTime"),
          Map.entry("min.cleanable.dirty.ratio", "0.3"),
          Map.entry("min.compaction.lag.ms", "1000"),
          Map.entry("min.insync.replicas", "1"),
          Map.entry("preallocate", "true"),
          Map.entry("remote.log.copy.disable", "false"),
          Map.entry("remote.log.delete.on.disable", "false"),
          Map.entry("remote.storage.enable", "false"),
          Map.entry("retention.bytes", "1073741824"),
          Map.entry("retention.ms", "86400000"),
          Map.entry("segment.bytes", "536870912"),
          Map.entry("segment.index.bytes", "5242880"),
          Map.entry("segment.jitter.ms", "1000"),
          Map.entry("segment.ms", "3600000"),
          Map.entry("unclean.leader.election.enable", "true"));

  /**
   * kafka-topics --create with every topic config of Kafka 4.1 at once succeeds on both, and
   * DescribeConfigs then gives the same overrides and the same topic configs in all.
   */
  @Test
  void kafkaTopicsCreatesATopicWithEveryTopicConfig() throws Exception {
    List<Map<String, String>> overrides = new ArrayList<>();
    List<Set<String>> names = new ArrayList<>();
    for (int port : ports()) {
      List<String> args =
          new ArrayList<>(
              List.of(
                  "org.apache.kafka.tools.TopicCommand",
                  "--bootstrap-server",
                  "127.0.0.1:" + port,
                  "--create",
                  "--topic",
                  "every-config",
                  "--partitions",
                  "1",
                  "--replication-factor",
                  "1"));
      EVERY_TOPIC_CONFIG.forEach(
          (key, value) -> args.addAll(List.of("--config", key + "=" + value)));
      ApacheKafka.ToolRun create = ApacheKafka.tool("", args.toArray(String[]::new));
      assertThat(create.exitStatus()).as(create.output()).isZero();
      try (Admin admin = admin(port)) {
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "every-config");
        var entries = admin.describeConfigs(List.of(topic)).all().get().get(topic).entries();
        Map<String, String> dynamic = new java.util.TreeMap<>();
        Set<String> all = new java.util.TreeSet<>();
        for (var entry : entries) {
          all.add(entry.name());
          if (entry.source()
              == org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
            dynamic.put(entry.name(), entry.value());
          }
        }
        overrides.add(dynamic);
        names.add(all);
      }
    }
    assertThat(overrides.get(1))
        .isEqualTo(overrides.get(0))
        .isEqualTo(new java.util.TreeMap<>(EVERY_TOPIC_CONFIG));
    // Tidelog describes one more, its own limit on what a batch decompresses to
    assertThat(names.get(1)).containsAll(names.get(0));
    Set<String> extra = new java.util.TreeSet<>(names.get(1));
    extra.removeAll(names.get(0));
    assertThat(extra).containsExactly("tidelog.max.uncompressed.message.bytes");
  }

  /** Kafka's own kafka-topics with --replica-assignment, on create and on alter, on both. */
  @Test
  void kafkaTopicsCreatesAndGrowsTopicsOfAManualAssignment() throws Exception {
    for (int port : ports()) {
      String bootstrap = "127.0.0.1:" + port;
      ApacheKafka.ToolRun create =
          ApacheKafka.tool(
              "",
              "org.apache.kafka.tools.TopicCommand",
              "--bootstrap-server",
              bootstrap,
              "--create",
              "--topic",
              "cli-assigned",
              "--replica-assignment",
              "1,1");
      assertThat(create.exitStatus()).as(create.output()).isZero();
      ApacheKafka.ToolRun alter =
          ApacheKafka.tool(
              "",
              "org.apache.kafka.tools.TopicCommand",
              "--bootstrap-server",
              bootstrap,
              "--alter",
              "--topic",
              "cli-assigned",
              "--partitions",
              "3",
              "--replica-assignment",
              "1,1,1");
      assertThat(alter.exitStatus()).as(alter.output()).isZero();
      ApacheKafka.ToolRun describe =
          ApacheKafka.tool(
              "",
              "org.apache.kafka.tools.TopicCommand",
              "--bootstrap-server",
              bootstrap,
              "--describe",
              "--topic",
              "cli-assigned");
      assertThat(describe.output())
          .as("port " + port)
          .contains("PartitionCount: 3")
          .contains("Partition: 2\tLeader: 1\tReplicas: 1\tIsr: 1");
    }
  }

  /**
   * kafka-log-dirs and Admin's describeLogDirs see, on both, the broker's one log directory with
   * its file system's space, and a topic's replica with its bytes on disk and no lag.
   */
  @Test
  void kafkaLogDirsDescribesTheReplicasOfEachDirectory() throws Exception {
    for (int port : ports()) {
      try (Admin admin = admin(port);
          var producer =
              new org.apache.kafka.clients.producer.KafkaProducer<String, String>(
                  Map.of(
                      "bootstrap.servers", "127.0.0.1:" + port,
                      "key.serializer", "org.apache.kafka.common.serialization.StringSerializer",
                      "value.serializer",
                          "org.apache.kafka.common.serialization.StringSerializer"))) {
        admin.createTopics(List.of(new NewTopic("sized", 1, (short) 1))).all().get();
        for (int i = 0; i < 10; i++) {
          producer
              .send(new org.apache.kafka.clients.producer.ProducerRecord<>("sized", "r" + i))
              .get();
        }
        var dirs = admin.describeLogDirs(List.of(1)).allDescriptions().get().get(1);
        assertThat(dirs).hasSize(1);
        var dir = dirs.values().iterator().next();
        assertThat(dir.error()).isNull();
        assertThat(dir.totalBytes().orElseThrow()).isPositive();
        assertThat(dir.usableBytes().orElseThrow()).isPositive();
        var sized = dir.replicaInfos().get(new org.apache.kafka.common.TopicPartition("sized", 0));
        assertThat(sized.size()).isPositive();
        assertThat(sized.offsetLag()).isZero();
        assertThat(sized.isFuture()).isFalse();
      }
      ApacheKafka.ToolRun tool =
          ApacheKafka.tool(
              "",
              "org.apache.kafka.tools.LogDirsCommand",
              "--bootstrap-server",
              "127.0.0.1:" + port,
              "--describe",
              "--topic-list",
              "sized");
      assertThat(tool.exitStatus()).as(tool.output()).isZero();
      assertThat(tool.output())
          .as("port " + port)
          .contains("\"broker\":1")
          .contains("\"partition\":\"sized-0\"")
          .contains("\"offsetLag\":0");
    }
  }

  @Test
  void alterConfigsOfTopicsRefusesPerResource() throws Exception {
    IncrementalAlterConfigsRequestData incremental = new IncrementalAlterConfigsRequestData();
    for (String[] change :
        List.of(
            new String[] {"existing", "retention.ms", "soon"},
            new String[] {"grown", "no.such.config", "1"},
            new String[] {"no-such-topic", "retention.ms", "1000"},
            new String[] {"fine", "retention.ms", "1000"})) {
      var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
      configs.add(
          new IncrementalAlterConfigsRequestData.AlterableConfig()
              .setName(change[1])
              .setValue(change[2])
              .setConfigOperation((byte) 0));
      incremental
          .resources()
          .add(
              new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                  .setResourceType(ConfigResource.Type.TOPIC.id())
                  .setResourceName(change[0])
                  .setConfigs(configs));
    }
    View view =
        same(
            new IncrementalAlterConfigsRequest.Builder(incremental).build((short) 1),
            (IncrementalAlterConfigsResponse r) ->
                r.data().responses().stream()
                    .map(x -> x.resourceName() + " " + Errors.forCode(x.errorCode()))
                    .toList());
    assertThat(view.results()).contains("fine NONE", "existing INVALID_CONFIG");

    Map<ConfigResource, AlterConfigsRequest.Config> legacy =
        Map.of(
            new ConfigResource(ConfigResource.Type.TOPIC, "grown"),
            new AlterConfigsRequest.Config(
                List.of(new AlterConfigsRequest.ConfigEntry("retention.ms", "x"))));
    same(
        new AlterConfigsRequest.Builder(legacy, false).build((short) 1),
        (AlterConfigsResponse r) ->
            r.data().responses().stream()
                .map(x -> x.resourceName() + " " + Errors.forCode(x.errorCode()))
                .toList());
  }

  /** One IncrementalAlterConfigs of one config of a BROKER resource, as a raw request. */
  private static IncrementalAlterConfigsRequest brokerChange(
      String broker, AlterConfigOp.OpType op, String key, String value, boolean validateOnly) {
    var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
    configs.add(
        new IncrementalAlterConfigsRequestData.AlterableConfig()
            .setName(key)
            .setValue(value)
            .setConfigOperation(op.id()));
    IncrementalAlterConfigsRequestData data =
        new IncrementalAlterConfigsRequestData().setValidateOnly(validateOnly);
    data.resources()
        .add(
            new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType(ConfigResource.Type.BROKER.id())
                .setResourceName(broker)
                .setConfigs(configs));
    return new IncrementalAlterConfigsRequest.Builder(data).build((short) 1);
  }

  private static IncrementalAlterConfigsResponse sent(
      int port, IncrementalAlterConfigsRequest request) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
      return (IncrementalAlterConfigsResponse) client.send(request);
    }
  }

  private static List<String> altered(IncrementalAlterConfigsResponse response) {
    return response.data().responses().stream()
        .map(x -> "'" + x.resourceName() + "' " + Errors.forCode(x.errorCode()))
        .toList();
  }

  /** What DescribeConfigs shows of {@code keys}: value, source and whether read-only. */
  private static Map<String, String> described(int port, ConfigResource resource, String... keys)
      throws Exception {
    try (Admin admin = admin(port)) {
      var entries =
          admin
              .describeConfigs(
                  List.of(resource), new DescribeConfigsOptions().includeSynonyms(true))
              .all()
              .get()
              .get(resource)
              .entries();
      Map<String, String> shown = new java.util.TreeMap<>();
      for (ConfigEntry entry : entries) {
        if (keys.length == 0 || List.of(keys).contains(entry.name())) {
          shown.put(
              entry.name(),
              entry.value()
                  + " "
                  + entry.source()
                  + (entry.isReadOnly() ? " read-only" : "")
                  + (entry.isSensitive() ? " sensitive" : ""));
        }
      }
      return shown;
    }
  }

  /**
   * Dynamic broker configs, per broker and the cluster default, through raw requests: the same
   * error code from both for keys that need a restart, invalid values, APPEND to a non-list, a key
   * neither knows, a bad broker name, validateOnly; then the same values and sources in
   * DescribeConfigs of the broker, the default, and a topic that inherits them.
   */
  @Test
  void dynamicBrokerConfigsAreAlteredAndDescribedAsInKafka() throws Exception {
    AlterConfigOp.OpType set = AlterConfigOp.OpType.SET;
    List<IncrementalAlterConfigsRequest> cases =
        List.of(
            brokerChange("1", set, "log.dirs", "/elsewhere", false),
            brokerChange("1", set, "log.retention.ms", "abc", false),
            brokerChange("1", set, "log.retention.hours", "5", false),
            brokerChange("1", set, "min.insync.replicas", "0", false),
            brokerChange("1", set, "auto.create.topics.enable", "false", false),
            brokerChange("1", AlterConfigOp.OpType.APPEND, "max.connections", "5", false),
            brokerChange("1", AlterConfigOp.OpType.DELETE, "log.dirs", null, false),
            brokerChange("1", set, "no.such.broker.config", "1", false),
            brokerChange("1", set, "max.connections", "1000", false),
            brokerChange("1", set, "follower.replication.throttled.rate", "-1", false),
            brokerChange("", set, "follower.replication.throttled.rate", "5000000", false),
            brokerChange("1", set, "follower.replication.throttled.rate", "1000000", false),
            brokerChange("1", set, "leader.replication.throttled.rate", "2000000", false),
            brokerChange("1", AlterConfigOp.OpType.APPEND, "log.cleanup.policy", "compact", false),
            brokerChange("", set, "log.retention.ms", "86400000", false),
            brokerChange("", set, "log.flush.interval.ms", "x", false),
            brokerChange("1", set, "log.segment.bytes", "2000000", true),
            // a listener's keystore and truststore change per broker, with its prefix only
            brokerChange("1", set, "ssl.keystore.location", "/elsewhere.p12", false),
            brokerChange("", set, "listener.name.plaintext.ssl.keystore.location", "/a", false),
            brokerChange("1", set, "listener.name.plaintext.ssl.keystore.location", "/a", true));
    try {
      for (IncrementalAlterConfigsRequest request : cases) {
        same(request, AdminDifferentialIT::altered);
      }
      // Where Tidelog differs on purpose, so Kafka is not asked: Kafka 4.1 answers NONE to a config
      // that an existing listener reads only at its start, cannot apply it, and then refuses later
      // changes of the broker's configs, for a while even after it is deleted (its check runs
      // against the configs it applied, which lag); Tidelog refuses it at once
      String startOnly = "listener.name.plaintext.ssl.cipher.suites";
      assertThat(altered(sent(tidelog.port, brokerChange("1", set, startOnly, "TLS_X", false))))
          .containsExactly("'1' INVALID_REQUEST");
      Map<String, String> broker = null;
      Map<String, String> clusterDefault = null;
      Map<String, String> topic = null;
      for (int port : ports()) {
        Map<String, String> b =
            described(
                port,
                new ConfigResource(ConfigResource.Type.BROKER, "1"),
                "log.retention.ms",
                "log.cleanup.policy",
                "max.connections",
                "log.segment.bytes",
                "no.such.broker.config",
                "message.max.bytes",
                "auto.create.topics.enable",
                "follower.replication.throttled.rate",
                "leader.replication.throttled.rate");
        Map<String, String> d = described(port, new ConfigResource(ConfigResource.Type.BROKER, ""));
        Map<String, String> t =
            described(
                port,
                new ConfigResource(ConfigResource.Type.TOPIC, "existing"),
                "retention.ms",
                "cleanup.policy",
                "max.message.bytes");
        if (broker == null) {
          broker = b;
          // kafka-storage format stores min.insync.replicas=1 as the cluster default (for KIP-966's
          // eligible leader replicas); Tidelog has no such bootstrap record
          assertThat(d.remove("min.insync.replicas")).isEqualTo("1 DYNAMIC_DEFAULT_BROKER_CONFIG");
          clusterDefault = d;
          topic = t;
        } else {
          assertThat(b).as("broker 1").isEqualTo(broker);
          assertThat(d).as("the cluster default").isEqualTo(clusterDefault);
          assertThat(t).as("a topic").isEqualTo(topic);
        }
      }
      assertThat(broker)
          .containsEntry("log.retention.ms", "86400000 DYNAMIC_DEFAULT_BROKER_CONFIG")
          .containsEntry("log.cleanup.policy", "delete,compact DYNAMIC_BROKER_CONFIG")
          .containsEntry(
              "follower.replication.throttled.rate", "1000000 DYNAMIC_BROKER_CONFIG read-only")
          .containsEntry("no.such.broker.config", "null DYNAMIC_BROKER_CONFIG read-only sensitive");
      assertThat(topic)
          .containsEntry("retention.ms", "86400000 DYNAMIC_DEFAULT_BROKER_CONFIG")
          .containsEntry("cleanup.policy", "delete,compact DYNAMIC_BROKER_CONFIG");
    } finally {
      for (int port : ports()) {
        try (Admin admin = admin(port)) {
          admin
              .incrementalAlterConfigs(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.BROKER, "1"),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("max.connections", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("log.cleanup.policy", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("no.such.broker.config", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("follower.replication.throttled.rate", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("leader.replication.throttled.rate", null),
                              AlterConfigOp.OpType.DELETE)),
                      new ConfigResource(ConfigResource.Type.BROKER, ""),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("log.retention.ms", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("follower.replication.throttled.rate", null),
                              AlterConfigOp.OpType.DELETE))))
              .all()
              .get();
        }
      }
    }
  }

  /**
   * A broker's listeners change as in Kafka 4.1: per broker only, each with a security protocol,
   * none that is advertised removed, a bound one's protocol kept; then a listener added is served
   * and, removed, no longer. {@code num.io.threads} is taken by both (here at the next start).
   */
  @Test
  void listenersChangePerBrokerAsInKafka() throws Exception {
    AlterConfigOp.OpType set = AlterConfigOp.OpType.SET;
    // a port each (freePort never hands one out twice): Kafka may hold a removed listener's
    // port for a while after it answers
    int kafkaExtra = EtcdServer.freePort();
    int tidelogExtra = EtcdServer.freePort();
    Map<Integer, Integer> extras = Map.of(kafka.port, kafkaExtra, tidelog.port, tidelogExtra);
    // Kafka's node has a controller listener beside its client one; Tidelog has none
    IntFunction<String> bound =
        port ->
            "PLAINTEXT://127.0.0.1:"
                + port
                + (port == kafka.port ? ",CONTROLLER://127.0.0.1:" + (port + 100) : "");
    IntFunction<String> protocols =
        port ->
            "PLAINTEXT:PLAINTEXT,EXTRA:PLAINTEXT"
                + (port == kafka.port ? ",CONTROLLER:PLAINTEXT" : "");
    IntFunction<String> withExtra = port -> ",EXTRA://127.0.0.1:" + extras.get(port);
    try {
      for (IntFunction<AbstractRequest> request :
          List.<IntFunction<AbstractRequest>>of(
              port -> brokerChange("", set, "listeners", bound.apply(port), false),
              port ->
                  brokerChange(
                      "1", set, "listeners", bound.apply(port) + withExtra.apply(port), false),
              port ->
                  brokerChange(
                      "1",
                      set,
                      "listener.security.protocol.map",
                      "PLAINTEXT:SSL,EXTRA:PLAINTEXT,CONTROLLER:PLAINTEXT",
                      false),
              port ->
                  brokerChange(
                      "1",
                      set,
                      "listeners",
                      bound.apply(port).replaceFirst("PLAINTEXT://[^,]*,?", "")
                          + withExtra.apply(port),
                      false),
              port ->
                  brokerChange(
                      "1", set, "advertised.listeners", "PLAINTEXT://localhost:" + port, false),
              port -> brokerChange("", set, "num.io.threads", "4", false),
              port -> brokerChange("1", set, "num.io.threads", "4", false),
              port ->
                  brokerChange(
                      "1", set, "listener.security.protocol.map", protocols.apply(port), false),
              port ->
                  brokerChange(
                      "1", set, "listeners", bound.apply(port) + withExtra.apply(port), true))) {
        same(request, AdminDifferentialIT::altered);
      }
      assertThat(extras.values()).as("nothing bound by validateOnly").allMatch(EtcdServer::isFree);

      // When both bind the listener, each serves on it; once it is removed, Tidelog no longer
      for (int port : ports()) {
        int extra = extras.get(port);
        assertThat(
                altered(
                    sent(
                        port,
                        brokerChange(
                            "1",
                            set,
                            "listeners",
                            bound.apply(port) + withExtra.apply(port),
                            false))))
            .containsExactly("'1' NONE");
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .untilAsserted(() -> assertThat(apiVersions(extra)).isEqualTo(Errors.NONE));
        try (RawKafkaClient open = new RawKafkaClient(extra, 10_000)) {
          assertThat(
                  altered(
                      sent(port, brokerChange("1", set, "listeners", bound.apply(port), false))))
              .containsExactly("'1' NONE");
          if (port == tidelog.port) {
            await()
                .atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(EtcdServer.isFree(extra)).isTrue());
            assertThatThrownBy(() -> open.send(new ApiVersionsRequest.Builder().build()))
                .as("a connection of the removed listener is closed")
                .isInstanceOf(IOException.class);
          }
        }
      }
    } finally {
      for (int port : ports()) {
        try (Admin admin = admin(port)) {
          ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
          admin
              .incrementalAlterConfigs(
                  Map.of(
                      broker,
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("listeners", null), AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("listener.security.protocol.map", null),
                              AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("num.io.threads", null),
                              AlterConfigOp.OpType.DELETE)),
                      new ConfigResource(ConfigResource.Type.BROKER, ""),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("num.io.threads", null),
                              AlterConfigOp.OpType.DELETE))))
              .all()
              .get();
        }
      }
    }
  }

  private static Errors apiVersions(int port) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(port, 10_000)) {
      return Errors.forCode(
          ((ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder().build()))
              .data()
              .errorCode());
    }
  }

  /** Tidelog's read-only broker keys are Kafka's, but for those it documents as restart-only. */
  @Test
  void theBrokerConfigsThatNeedARestartAreKafkas() throws Exception {
    Map<String, Boolean> kafkas = readOnly(kafka.port);
    Map<String, Boolean> tidelogs = readOnly(tidelog.port);
    Set<String> differing = new java.util.TreeSet<>();
    tidelogs.forEach(
        (key, readOnly) -> {
          if (kafkas.containsKey(key) && !kafkas.get(key).equals(readOnly)) {
            differing.add(key);
          }
        });
    // A listener's security configs other than its stores: Kafka shows them dynamic, as they can be
    // given, with its prefix, to a listener added at run time; Tidelog shows them as they are read
    differing.removeIf(
        key ->
            key.startsWith("ssl.") && !SslConfigs.RECONFIGURABLE_CONFIGS.contains(key)
                || key.startsWith("sasl.")
                || key.equals("principal.builder.class"));
    assertThat(differing).isEmpty();
    assertThat(tidelogs.entrySet().stream().filter(e -> !e.getValue()).map(Map.Entry::getKey))
        .as("Tidelog's dynamic keys")
        .hasSizeGreaterThan(20)
        .allSatisfy(key -> assertThat(kafkas).containsEntry(key, false));
  }

  private static Map<String, Boolean> readOnly(int port) throws Exception {
    ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
    try (Admin admin = admin(port)) {
      Map<String, Boolean> readOnly = new java.util.TreeMap<>();
      admin
          .describeConfigs(List.of(broker))
          .all()
          .get()
          .get(broker)
          .entries()
          .forEach(e -> readOnly.put(e.name(), e.isReadOnly()));
      return readOnly;
    }
  }

  /** Kafka's own kafka-configs on a broker, the broker default and a topic, on both. */
  @Test
  void kafkaConfigsAltersAndDescribesBrokersTheirDefaultAndTopics() throws Exception {
    for (int port : ports()) {
      String bootstrap = "127.0.0.1:" + port;
      for (String[] change :
          List.of(
              new String[] {
                "brokers", "--entity-default", "--add-config", "log.retention.bytes=1073741824"
              },
              new String[] {
                "brokers", "--entity-name", "1", "--add-config", "max.connections.per.ip=500"
              },
              new String[] {
                "topics",
                "--entity-name",
                "existing",
                "--add-config",
                "retention.ms=5000,cleanup.policy=[compact,delete]"
              })) {
        List<String> args = new ArrayList<>(List.of("--alter", "--entity-type"));
        args.addAll(List.of(change));
        ApacheKafka.ToolRun alter = kafkaConfigs(bootstrap, args.toArray(String[]::new));
        assertThat(alter.exitStatus()).as(alter.output()).isZero();
      }
      try {
        ApacheKafka.ToolRun defaults =
            kafkaConfigs(bootstrap, "--describe", "--entity-type", "brokers", "--entity-default");
        assertThat(defaults.output())
            .as("port " + port)
            .contains("log.retention.bytes=1073741824 sensitive=false")
            .contains("DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.bytes=1073741824");
        ApacheKafka.ToolRun one =
            kafkaConfigs(bootstrap, "--describe", "--entity-type", "brokers", "--entity-name", "1");
        assertThat(one.output())
            .as("port " + port)
            .contains("max.connections.per.ip=500 sensitive=false")
            .contains("DYNAMIC_BROKER_CONFIG:max.connections.per.ip=500");
        ApacheKafka.ToolRun topic =
            kafkaConfigs(
                bootstrap, "--describe", "--entity-type", "topics", "--entity-name", "existing");
        assertThat(topic.output())
            .as("port " + port)
            .contains("retention.ms=5000 sensitive=false")
            .contains("DYNAMIC_TOPIC_CONFIG:retention.ms=5000")
            .contains("cleanup.policy=compact,delete");
      } finally {
        try (Admin admin = admin(port)) {
          admin
              .incrementalAlterConfigs(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.BROKER, ""),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("log.retention.bytes", null),
                              AlterConfigOp.OpType.DELETE)),
                      new ConfigResource(ConfigResource.Type.BROKER, "1"),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("max.connections.per.ip", null),
                              AlterConfigOp.OpType.DELETE)),
                      new ConfigResource(ConfigResource.Type.TOPIC, "existing"),
                      List.of(
                          new AlterConfigOp(
                              new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE),
                          new AlterConfigOp(
                              new ConfigEntry("cleanup.policy", null),
                              AlterConfigOp.OpType.DELETE))))
              .all()
              .get();
        }
      }
    }
  }

  private static List<String> elected(org.apache.kafka.common.requests.ElectLeadersResponse r) {
    List<String> results = new ArrayList<>();
    results.add("request " + Errors.forCode(r.data().errorCode()));
    r.data()
        .replicaElectionResults()
        .forEach(
            t ->
                t.partitionResult()
                    .forEach(
                        p ->
                            results.add(
                                t.topic()
                                    + "-"
                                    + p.partitionId()
                                    + " "
                                    + Errors.forCode(p.errorCode()))));
    return results;
  }

  /**
   * ElectLeaders on one broker, where no election is ever needed: the same code for each partition
   * named, for partitions that do not exist, and the same (empty) answer for all partitions,
   * preferred and unclean.
   */
  @Test
  void electLeadersAnswersAsKafka() throws Exception {
    for (org.apache.kafka.common.ElectionType type :
        List.of(
            org.apache.kafka.common.ElectionType.PREFERRED,
            org.apache.kafka.common.ElectionType.UNCLEAN)) {
      View named =
          same(
              new org.apache.kafka.common.requests.ElectLeadersRequest.Builder(
                      type,
                      List.of(
                          new org.apache.kafka.common.TopicPartition("existing", 0),
                          new org.apache.kafka.common.TopicPartition("existing", 7),
                          new org.apache.kafka.common.TopicPartition("no-such-topic", 0)),
                      30_000)
                  .build((short) 2),
              AdminDifferentialIT::elected);
      assertThat(named.results()).contains("existing-0 ELECTION_NOT_NEEDED");
      same(
          new org.apache.kafka.common.requests.ElectLeadersRequest.Builder(type, null, 30_000)
              .build((short) 2),
          AdminDifferentialIT::elected);
    }
  }

  /**
   * AlterReplicaLogDirs on one node each, whose only log directory holds every replica: the same
   * code per partition for a move to that directory (nothing to do), to a directory that is not in
   * {@code log.dirs} or is relative, and for a partition or topic that does not exist.
   */
  @Test
  void replicaLogDirMovesAreCheckedAsKafkaChecksThem() throws Exception {
    View answered =
        same(
            port -> {
              String dir;
              try (Admin admin = admin(port)) {
                dir =
                    admin
                        .describeLogDirs(List.of(1))
                        .allDescriptions()
                        .get()
                        .get(1)
                        .keySet()
                        .iterator()
                        .next();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
              var data = new org.apache.kafka.common.message.AlterReplicaLogDirsRequestData();
              Map<String, Map<String, List<Integer>>> moves =
                  Map.of(
                      dir,
                      Map.of("existing", List.of(0, 7), "no-such-topic", List.of(0)),
                      "/no-such-log-dir",
                      Map.of("grown", List.of(0)),
                      "relative-dir",
                      Map.of("topic-two", List.of(1)));
              moves.forEach(
                  (path, topics) -> {
                    var logDir =
                        new org.apache.kafka.common.message.AlterReplicaLogDirsRequestData
                                .AlterReplicaLogDir()
                            .setPath(path);
                    topics.forEach(
                        (topic, partitions) ->
                            logDir
                                .topics()
                                .add(
                                    new org.apache.kafka.common.message
                                            .AlterReplicaLogDirsRequestData
                                            .AlterReplicaLogDirTopic()
                                        .setName(topic)
                                        .setPartitions(partitions)));
                    data.dirs().add(logDir);
                  });
              return new org.apache.kafka.common.requests.AlterReplicaLogDirsRequest.Builder(data)
                  .build((short) 2);
            },
            (org.apache.kafka.common.requests.AlterReplicaLogDirsResponse r) ->
                r.data().results().stream()
                    .flatMap(
                        t ->
                            t.partitions().stream()
                                .map(
                                    p ->
                                        t.topicName()
                                            + "-"
                                            + p.partitionIndex()
                                            + " "
                                            + Errors.forCode(p.errorCode())))
                    .toList());
    assertThat(answered.results())
        .contains("existing-0 NONE", "grown-0 LOG_DIR_NOT_FOUND")
        .hasSize(5);
  }

  /**
   * AlterPartitionReassignments and ListPartitionReassignments on one node each: the same code and
   * message per partition for an unknown topic and partition, an empty, repeated or unregistered
   * replica, a cancellation with nothing in progress, a change of the replication factor that the
   * request does not allow, and a move to the replicas the partition has; nothing in progress
   * after.
   */
  @Test
  void reassignmentsAreCheckedAsKafkasControllerChecksThem() throws Exception {
    for (boolean allowFactorChange : List.of(true, false)) {
      View answered =
          same(
              reassign(
                  allowFactorChange,
                  Map.of(
                      "no-such-topic",
                      Map.of(0, Arrays.asList(1)),
                      "existing",
                      Map.of(
                          7, Arrays.asList(1),
                          0, Arrays.asList(1))),
                  Map.of("grown", Map.of(0, List.of()))),
              AdminDifferentialIT::reassigned);
      assertThat(answered.results()).contains("existing-0 NONE null");
      for (List<Integer> replicas : List.of(List.of(1, 1), List.of(1, 42), List.of(42))) {
        same(
            reassign(allowFactorChange, Map.of("existing", Map.of(0, replicas)), Map.of()),
            AdminDifferentialIT::reassigned);
      }
      Map<Integer, List<Integer>> cancel = new HashMap<>();
      cancel.put(0, null);
      View cancelled =
          same(
              reassign(allowFactorChange, Map.of("existing", cancel), Map.of()),
              AdminDifferentialIT::reassigned);
      assertThat(cancelled.results()).contains("existing-0 NO_REASSIGNMENT_IN_PROGRESS null");
    }
    same(
        new ListPartitionReassignmentsRequest.Builder(
                new ListPartitionReassignmentsRequestData().setTopics(null))
            .build((short) 0),
        (ListPartitionReassignmentsResponse r) ->
            List.of(Errors.forCode(r.data().errorCode()) + " " + r.data().topics()));
  }

  /**
   * An AlterPartitionReassignments v1 of {@code moves} and {@code more}, by topic and partition.
   */
  private static AbstractRequest reassign(
      boolean allowFactorChange,
      Map<String, Map<Integer, List<Integer>>> moves,
      Map<String, Map<Integer, List<Integer>>> more) {
    AlterPartitionReassignmentsRequestData data =
        new AlterPartitionReassignmentsRequestData()
            .setAllowReplicationFactorChange(allowFactorChange);
    Map<String, Map<Integer, List<Integer>>> all = new java.util.TreeMap<>(moves);
    all.putAll(more);
    all.forEach(
        (topic, partitions) -> {
          var reassignable =
              new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(topic);
          new java.util.TreeMap<>(partitions)
              .forEach(
                  (p, replicas) ->
                      reassignable
                          .partitions()
                          .add(
                              new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                                  .setPartitionIndex(p)
                                  .setReplicas(replicas)));
          data.topics().add(reassignable);
        });
    return new AlterPartitionReassignmentsRequest.Builder(data).build((short) 1);
  }

  private static List<String> reassigned(AlterPartitionReassignmentsResponse response) {
    List<String> results = new ArrayList<>();
    results.add("top " + Errors.forCode(response.data().errorCode()));
    response
        .data()
        .responses()
        .forEach(
            t ->
                t.partitions()
                    .forEach(
                        p ->
                            results.add(
                                t.name()
                                    + "-"
                                    + p.partitionIndex()
                                    + " "
                                    + Errors.forCode(p.errorCode())
                                    + " "
                                    + p.errorMessage())));
    return results;
  }

  private static IncrementalAlterConfigsRequest loggerChange(
      AlterConfigOp.OpType op, String logger, String level) {
    var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
    configs.add(
        new IncrementalAlterConfigsRequestData.AlterableConfig()
            .setName(logger)
            .setValue(level)
            .setConfigOperation(op.id()));
    IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData();
    data.resources()
        .add(
            new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType(ConfigResource.Type.BROKER_LOGGER.id())
                .setResourceName("1")
                .setConfigs(configs));
    return new IncrementalAlterConfigsRequest.Builder(data).build((short) 1);
  }

  /**
   * Broker loggers: the same code from both for a level that is not Kafka's, a logger neither has,
   * removing the root's level, APPEND, and good changes; kafka-configs --entity-type broker-loggers
   * changes a level on both, and on Tidelog the logger logs at it from then on.
   */
  @Test
  void brokerLoggersChangeAsInKafka() throws Exception {
    String logger = "org.apache.kafka.clients.NetworkClient"; // a logger both brokers have
    same(loggerChange(AlterConfigOp.OpType.SET, logger, "LOUD"), AdminDifferentialIT::altered);
    same(
        loggerChange(AlterConfigOp.OpType.SET, "no.such.logger", "DEBUG"),
        AdminDifferentialIT::altered);
    same(loggerChange(AlterConfigOp.OpType.DELETE, "root", null), AdminDifferentialIT::altered);
    same(loggerChange(AlterConfigOp.OpType.APPEND, logger, "DEBUG"), AdminDifferentialIT::altered);
    same(loggerChange(AlterConfigOp.OpType.SET, "root", "INFO"), AdminDifferentialIT::altered);

    String traced = "io.tidelog.broker.protocol.ConfigsHandler";
    org.slf4j.Logger tidelogs = org.slf4j.LoggerFactory.getLogger(traced);
    assertThat(tidelogs.isTraceEnabled()).isFalse();
    for (int port : ports()) {
      String name = port == tidelog.port ? traced : "kafka.server.KafkaApis";
      ApacheKafka.ToolRun set =
          kafkaConfigs(
              "127.0.0.1:" + port,
              "--alter",
              "--entity-type",
              "broker-loggers",
              "--entity-name",
              "1",
              "--add-config",
              name + "=TRACE");
      assertThat(set.exitStatus()).as(set.output()).isZero();
      ApacheKafka.ToolRun describe =
          kafkaConfigs(
              "127.0.0.1:" + port,
              "--describe",
              "--entity-type",
              "broker-loggers",
              "--entity-name",
              "1");
      assertThat(describe.output()).as("port " + port).contains(name + "=TRACE", "root=INFO");
    }
    assertThat(tidelogs.isTraceEnabled()).as("set through kafka-configs").isTrue();
    for (int port : ports()) {
      String name = port == tidelog.port ? traced : "kafka.server.KafkaApis";
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        IncrementalAlterConfigsResponse response =
            (IncrementalAlterConfigsResponse)
                client.send(loggerChange(AlterConfigOp.OpType.DELETE, name, null));
        assertThat(altered(response)).containsExactly("'1' NONE");
      }
    }
    assertThat(tidelogs.isTraceEnabled()).as("back to its parent's level").isFalse();
  }

  /** Kafka's own kafka-configs against {@code bootstrap}, with {@code args}. */
  private static ApacheKafka.ToolRun kafkaConfigs(String bootstrap, String... args)
      throws Exception {
    List<String> command =
        new ArrayList<>(List.of("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap));
    command.addAll(List.of(args));
    return ApacheKafka.tool("", command.toArray(String[]::new));
  }
}
