package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopicCollection;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same requests, sent as raw frames to Apache Kafka 4.1 and to Tidelog, must get the same
 * answers: the per-request bounds and the handling of repeated partitions that a hostile or buggy
 * client meets (issue 17). Each case compares what a client can see: error codes and messages per
 * topic or partition, how many entries come back, and the offsets that result.
 */
class KafkaDifferentialIT {
  @TempDir static Path kafkaDir;
  @TempDir static Path tidelogDir;
  static ApacheKafka kafka;
  static TestBroker tidelog;

  @BeforeAll
  static void start() throws Exception {
    kafka = ApacheKafka.start(kafkaDir);
    tidelog = TestBroker.start(tidelogDir, Map.of());
    for (int port : ports()) {
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
        admin
            .createTopics(
                List.of(
                    new NewTopic("grow", 1, (short) 1),
                    new NewTopic("dup", 1, (short) 1),
                    new NewTopic("sessions", 2, (short) 1)))
            .all()
            .get();
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .ignoreExceptions()
          .until(
              () ->
                  latestOffset(port, new TopicPartition("dup", 0)) == 0
                      && latestOffset(port, new TopicPartition("sessions", 1)) == 0);
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

  /** Sends {@code request} to Kafka and to Tidelog and returns both views, Kafka's first. */
  private static <R extends AbstractResponse, V> List<V> both(
      AbstractRequest request, Function<R, V> view) throws Exception {
    List<V> views = new ArrayList<>();
    for (int port : ports()) {
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        @SuppressWarnings("unchecked")
        R response = (R) client.send(request);
        views.add(view.apply(response));
      }
    }
    return views;
  }

  private static <V> void assertSame(List<V> views) {
    assertThat(views.get(1)).as("Tidelog's answer, against Apache Kafka's").isEqualTo(views.get(0));
  }

  /** A CreateTopics v7 of {@code topics}, as a client may send it (names repeated, say). */
  static CreateTopicsRequest createTopics(boolean validateOnly, CreatableTopic... topics) {
    CreatableTopicCollection collection = new CreatableTopicCollection();
    for (CreatableTopic topic : topics) {
      collection.add(topic);
    }
    return new CreateTopicsRequest.Builder(
            new CreateTopicsRequestData()
                .setTopics(collection)
                .setTimeoutMs(30_000)
                .setValidateOnly(validateOnly))
        .build((short) 7);
  }

  private static CreatableTopic topic(String name, int partitions) {
    return new CreatableTopic()
        .setName(name)
        .setNumPartitions(partitions)
        .setReplicationFactor((short) 1);
  }

  private static List<String> topicResults(CreateTopicsResponse response) {
    return response.data().topics().stream()
        .map(t -> t.name() + " " + Errors.forCode(t.errorCode()) + " " + t.errorMessage())
        .sorted()
        .toList();
  }

  @Test
  void moreThanTenThousandPartitionsInOneCreateTopicsAreRefusedForEveryTopic() throws Exception {
    List<List<String>> views =
        both(
            createTopics(false, topic("cap-a", 5_000), topic("cap-b", 5_001)),
            KafkaDifferentialIT::topicResults);
    assertSame(views);
    assertThat(views.get(1)).allMatch(line -> line.contains("POLICY_VIOLATION"));
  }

  @Test
  void aTopicOfIntegerMaxValuePartitionsIsRefusedAtOnce() throws Exception {
    List<List<String>> views =
        both(
            createTopics(false, topic("huge", Integer.MAX_VALUE)),
            KafkaDifferentialIT::topicResults);
    assertSame(views);
    assertThat(views.get(1)).singleElement().asString().contains("POLICY_VIOLATION");
  }

  @Test
  void oneTopicMayHave9999PartitionsForItsRecordTakesTheTenThousandth() throws Exception {
    List<List<String>> allowed =
        both(createTopics(true, topic("at-cap", 9_999)), KafkaDifferentialIT::topicResults);
    assertSame(allowed);
    assertThat(allowed.get(1)).containsExactly("at-cap NONE null");

    List<List<String>> refused =
        both(createTopics(true, topic("at-cap", 10_000)), KafkaDifferentialIT::topicResults);
    assertSame(refused);
    assertThat(refused.get(1))
        .containsExactly(
            "at-cap POLICY_VIOLATION Unable to perform excessively large batch operation.");
  }

  /**
   * Where Tidelog differs, on purpose: Apache Kafka 4.1 answers a CreatePartitions of more than
   * 10,000 new partitions with UNKNOWN_SERVER_ERROR, and yet adds the first 10,000 of them (its
   * bounded list of records overflows inside a per-topic catch). Tidelog refuses the request with
   * POLICY_VIOLATION, as it refuses an oversized CreateTopics, and adds nothing.
   */
  @Test
  void growingATopicByMoreThanTenThousandPartitionsIsRefusedAndAddsNothing() throws Exception {
    CreatePartitionsTopicCollection topics = new CreatePartitionsTopicCollection();
    topics.add(new CreatePartitionsTopic().setName("grow").setCount(10_002).setAssignments(null));
    List<String> views =
        both(
            new CreatePartitionsRequest.Builder(
                    new CreatePartitionsRequestData().setTopics(topics).setTimeoutMs(30_000))
                .build((short) 3),
            (CreatePartitionsResponse r) -> {
              var result = r.data().results().get(0);
              return result.name()
                  + " "
                  + Errors.forCode(result.errorCode())
                  + " "
                  + result.errorMessage();
            });
    assertThat(views.get(0)).isEqualTo("grow UNKNOWN_SERVER_ERROR null");
    assertThat(views.get(1))
        .isEqualTo("grow POLICY_VIOLATION Excessively large number of partitions per request.");
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, tidelog.bootstrap()))) {
      assertThat(
              admin.describeTopics(List.of("grow")).allTopicNames().get().get("grow").partitions())
          .hasSize(1);
    }
  }

  private static ProduceRequest produce(short acks, TopicPartition tp, String... values) {
    List<MemoryRecords> batches = new ArrayList<>();
    for (String value : values) {
      batches.add(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes())));
    }
    return SampleRequests.repeatedProduce(acks, tp, batches);
  }

  /**
   * A record stamped two hours ahead of the brokers' clocks is refused INVALID_TIMESTAMP by both,
   * under Kafka 4's default message.timestamp.after.max.ms of an hour; one a minute ahead is not.
   */
  @Test
  void aRecordStampedTooFarAheadIsRefusedAsByKafka() throws Exception {
    TopicPartition tp = new TopicPartition("dup", 0);
    long now = System.currentTimeMillis();
    for (long ahead : new long[] {7_200_000L, 60_000L}) {
      List<List<String>> views =
          both(
              SampleRequests.repeatedProduce(
                  (short) 1,
                  tp,
                  List.of(
                      MemoryRecords.withRecords(
                          Compression.NONE, new SimpleRecord(now + ahead, "ahead".getBytes())))),
              KafkaDifferentialIT::partitionResults);
      assertSame(views);
      assertThat(views.get(1))
          .containsExactly(ahead > 3_600_000L ? "dup-0 INVALID_TIMESTAMP" : "dup-0 NONE");
    }
  }

  private static List<String> partitionResults(ProduceResponse response) {
    List<String> results = new ArrayList<>();
    forEachPartition(
        response,
        (name, p) -> results.add(name + "-" + p.index() + " " + Errors.forCode(p.errorCode())));
    return results;
  }

  private static void forEachPartition(
      ProduceResponse response,
      java.util.function.BiConsumer<String, ProduceResponseData.PartitionProduceResponse> action) {
    response
        .data()
        .responses()
        .forEach(t -> t.partitionResponses().forEach(p -> action.accept(t.name(), p)));
  }

  /**
   * A client may not write what only a transaction coordinator writes or vouches for. Transactional
   * records (a commit marker, or a transactional batch) without a transactional id are refused
   * TRANSACTIONAL_ID_AUTHORIZATION_FAILED; with one, no coordinator can verify that the partition
   * was added to a transaction (neither cluster has a __transaction_state yet here), so
   * NOT_ENOUGH_REPLICAS; a control batch that is not transactional is refused INVALID_RECORD. Each
   * answer is Kafka 4.1's, and nothing is appended.
   */
  @Test
  void aClientsMarkersAndTransactionalBatchesOutsideATransactionAreRefusedAsByKafka()
      throws Exception {
    TopicPartition tp = new TopicPartition("dup", 0);
    long[] before = {latestOffset(kafka.port, tp), latestOffset(tidelog.port, tp)};
    List<MemoryRecords> transactional =
        List.of(
            MemoryRecords.withEndTransactionMarker(
                7L, (short) 0, new EndTransactionMarker(ControlRecordType.COMMIT, 0)),
            MemoryRecords.withTransactionalRecords(
                Compression.NONE, 7L, (short) 0, 0, new SimpleRecord("uncommitted".getBytes())));
    for (MemoryRecords batch : transactional) {
      ProduceRequest anonymous = SampleRequests.repeatedProduce((short) -1, tp, List.of(batch));
      List<List<String>> views = both(anonymous, KafkaDifferentialIT::partitionResultsAndMessages);
      assertSame(views);
      assertThat(views.get(1)).containsExactly("dup-0 TRANSACTIONAL_ID_AUTHORIZATION_FAILED null");

      ProduceRequest named =
          new ProduceRequest(
              SampleRequests.repeatedProduce((short) -1, tp, List.of(batch))
                  .data()
                  .setTransactionalId("tx"),
              (short) 9);
      views = both(named, KafkaDifferentialIT::partitionResultsAndMessages);
      assertSame(views);
      assertThat(views.get(1))
          .singleElement()
          .asString()
          .startsWith("dup-0 NOT_ENOUGH_REPLICAS Unable to verify");
    }
    ByteBuffer buffer = ByteBuffer.allocate(256);
    MemoryRecordsBuilder control =
        MemoryRecords.builder(
            buffer,
            RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE,
            TimestampType.CREATE_TIME,
            0L,
            RecordBatch.NO_TIMESTAMP,
            RecordBatch.NO_PRODUCER_ID,
            RecordBatch.NO_PRODUCER_EPOCH,
            RecordBatch.NO_SEQUENCE,
            false,
            true,
            RecordBatch.NO_PARTITION_LEADER_EPOCH);
    control.appendControlRecord(
        System.currentTimeMillis(), ControlRecordType.COMMIT, ByteBuffer.allocate(6));
    List<List<String>> views =
        both(
            SampleRequests.repeatedProduce((short) -1, tp, List.of(control.build())),
            KafkaDifferentialIT::partitionResults);
    assertSame(views); // Kafka gives no message; Tidelog says clients may not write control records
    assertThat(views.get(1)).containsExactly("dup-0 INVALID_RECORD");
    assertThat(latestOffset(kafka.port, tp)).isEqualTo(before[0]);
    assertThat(latestOffset(tidelog.port, tp)).isEqualTo(before[1]);
  }

  /** Each partition's error, then its message. */
  private static List<String> partitionResultsAndMessages(ProduceResponse response) {
    List<String> results = new ArrayList<>();
    forEachPartition(
        response,
        (name, p) ->
            results.add(
                name
                    + "-"
                    + p.index()
                    + " "
                    + Errors.forCode(p.errorCode())
                    + " "
                    + p.errorMessage()));
    return results;
  }

  /**
   * DescribeProducers, after an idempotent producer sent three batches: both brokers describe one
   * producer at epoch 0 and last sequence 2, no transaction; a partition out of range and an
   * unknown topic are UNKNOWN_TOPIC_OR_PARTITION on both. Kafka's own {@code kafka-transactions
   * describe-producers} prints the producer from Tidelog.
   */
  @Test
  void describeProducersShowsAnIdempotentProducersEpochAndSequenceAsKafkaDoes() throws Exception {
    List<String> described = new ArrayList<>();
    for (int port : ports()) {
      String bootstrap = "127.0.0.1:" + port;
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic("producers", 1, (short) 1))).all().get();
      }
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              Map.of(
                  ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  bootstrap,
                  ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                  true),
              new ByteArraySerializer(),
              new ByteArraySerializer())) {
        for (int i = 0; i < 3; i++) {
          producer.send(new ProducerRecord<>("producers", 0, null, new byte[10])).get();
        }
      }
      DescribeProducersRequestData data = new DescribeProducersRequestData();
      data.topics()
          .add(
              new DescribeProducersRequestData.TopicRequest()
                  .setName("producers")
                  .setPartitionIndexes(List.of(0, 5)));
      data.topics()
          .add(
              new DescribeProducersRequestData.TopicRequest()
                  .setName("no-such-topic")
                  .setPartitionIndexes(List.of(0)));
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        DescribeProducersResponse response =
            (DescribeProducersResponse)
                client.send(new DescribeProducersRequest.Builder(data).build((short) 0));
        List<String> view = new ArrayList<>();
        response
            .data()
            .topics()
            .forEach(
                t ->
                    t.partitions()
                        .forEach(
                            p -> {
                              view.add(
                                  t.name()
                                      + "-"
                                      + p.partitionIndex()
                                      + " "
                                      + Errors.forCode(p.errorCode()));
                              p.activeProducers()
                                  .forEach(
                                      a -> {
                                        assertThat(a.producerId()).isNotNegative();
                                        assertThat(a.lastTimestamp()).isPositive();
                                        view.add("  " + producerState(a));
                                      });
                            }));
        described.add(String.join("\n", view));
      }
    }
    assertThat(described.get(1)).as("Tidelog's answer").isEqualTo(described.get(0));
    assertThat(described.get(1))
        .isEqualTo(
            String.join(
                "\n",
                "producers-0 NONE",
                "  epoch 0 last sequence 2 coordinator epoch -1 transaction start -1",
                "producers-5 UNKNOWN_TOPIC_OR_PARTITION",
                "no-such-topic-0 UNKNOWN_TOPIC_OR_PARTITION"));
    ApacheKafka.ToolRun tool =
        ApacheKafka.tool(
            "",
            "org.apache.kafka.tools.TransactionsCommand",
            "--bootstrap-server",
            "127.0.0.1:" + tidelog.port,
            "describe-producers",
            "--topic",
            "producers",
            "--partition",
            "0");
    assertThat(tool.exitStatus()).as(tool.output()).isZero();
    assertThat(tool.output()).containsPattern("\\d+\\s+0\\s+-1\\s+2\\s+\\d+\\s+None");
  }

  /**
   * WriteTxnMarkers, as Admin's abortTransaction ({@code kafka-transactions abort}) and a
   * coordinator send it: an abort marker for a producer the log has not seen is written; one of an
   * older producer epoch is INVALID_PRODUCER_EPOCH, one of an older coordinator epoch
   * TRANSACTION_COORDINATOR_FENCED; an unknown partition UNKNOWN_TOPIC_OR_PARTITION beside a known
   * one that is written. Both brokers then hold the same offsets and describe the producer alike,
   * and Kafka's {@code kafka-transactions abort} closes a transaction on Tidelog.
   */
  @Test
  void transactionMarkersAreWrittenAndFencedAsByKafka() throws Exception {
    TopicPartition tp = new TopicPartition("markers", 0);
    List<String> views = new ArrayList<>();
    for (int port : ports()) {
      String bootstrap = "127.0.0.1:" + port;
      List<String> view = new ArrayList<>();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
        await()
            .atMost(Duration.ofSeconds(60))
            .ignoreExceptions()
            .until(() -> latestOffset(port, tp) == 0);
        admin.abortTransaction(new AbortTransactionSpec(tp, 4242L, (short) 3, 7)).all().get();
      }
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        view.add("older epoch: " + markers(client, 4242L, (short) 2, 7, List.of(tp)));
        view.add("older coordinator: " + markers(client, 4242L, (short) 3, 6, List.of(tp)));
        view.add(
            "unknown and known: "
                + markers(
                    client, 4242L, (short) 3, 7, List.of(new TopicPartition("no-such", 0), tp)));
        DescribeProducersRequestData data = new DescribeProducersRequestData();
        data.topics()
            .add(
                new DescribeProducersRequestData.TopicRequest()
                    .setName(tp.topic())
                    .setPartitionIndexes(List.of(0)));
        DescribeProducersResponse described =
            (DescribeProducersResponse)
                client.send(new DescribeProducersRequest.Builder(data).build((short) 0));
        described
            .data()
            .topics()
            .get(0)
            .partitions()
            .get(0)
            .activeProducers()
            .forEach(p -> view.add("producer " + p.producerId() + " " + producerState(p)));
      }
      view.add("log end " + latestOffset(port, tp));
      views.add(String.join("\n", view));
    }
    assertSame(views);
    assertThat(views.get(1))
        .isEqualTo(
            String.join(
                "\n",
                "older epoch: [markers-0 INVALID_PRODUCER_EPOCH]",
                "older coordinator: [markers-0 TRANSACTION_COORDINATOR_FENCED]",
                "unknown and known: [markers-0 NONE, no-such-0 UNKNOWN_TOPIC_OR_PARTITION]",
                "producer 4242 epoch 3 last sequence -1 coordinator epoch 7 transaction start -1",
                "log end 2"));
    ApacheKafka.ToolRun tool =
        ApacheKafka.tool(
            "",
            "org.apache.kafka.tools.TransactionsCommand",
            "--bootstrap-server",
            "127.0.0.1:" + tidelog.port,
            "abort",
            "--topic",
            tp.topic(),
            "--partition",
            "0",
            "--producer-id",
            "4243",
            "--producer-epoch",
            "0",
            "--coordinator-epoch",
            "0");
    assertThat(tool.exitStatus()).as(tool.output()).isZero();
    assertThat(latestOffset(tidelog.port, tp)).isEqualTo(3);
  }

  /** What DescribeProducers says of a producer but its id and last timestamp. */
  private static String producerState(DescribeProducersResponseData.ProducerState producer) {
    return "epoch "
        + producer.producerEpoch()
        + " last sequence "
        + producer.lastSequence()
        + " coordinator epoch "
        + producer.coordinatorEpoch()
        + " transaction start "
        + producer.currentTxnStartOffset();
  }

  /** One WriteTxnMarkers of one abort marker; each partition's answer, sorted. */
  private static List<String> markers(
      RawKafkaClient client,
      long producerId,
      short producerEpoch,
      int coordinatorEpoch,
      List<TopicPartition> partitions)
      throws Exception {
    WriteTxnMarkersResponse response =
        (WriteTxnMarkersResponse)
            client.send(
                new WriteTxnMarkersRequest.Builder(
                        List.of(
                            new WriteTxnMarkersRequest.TxnMarkerEntry(
                                producerId,
                                producerEpoch,
                                coordinatorEpoch,
                                TransactionResult.ABORT,
                                partitions)))
                    .build((short) 1));
    List<String> answers = new ArrayList<>();
    response
        .errorsByProducerId()
        .get(producerId)
        .forEach((partition, error) -> answers.add(partition + " " + error));
    answers.sort(null);
    return answers;
  }

  @Test
  void acksOtherThanMinusOneZeroOrOneAreRefused() throws Exception {
    List<List<String>> views =
        both(
            produce((short) 2, new TopicPartition("grow", 0), "a"),
            KafkaDifferentialIT::partitionResults);
    assertSame(views);
    assertThat(views.get(1)).containsExactly("grow-0 INVALID_REQUIRED_ACKS");
  }

  @Test
  void repeatedPartitionsAreAnsweredOnceInProduceAndFetchAndRefusedInListOffsets()
      throws Exception {
    TopicPartition tp = new TopicPartition("dup", 0);
    long before = latestOffset(kafka.port, tp);
    assertThat(latestOffset(tidelog.port, tp)).isEqualTo(before);

    // Produce: one answer for the partition named three times, and what it appended
    List<List<String>> produced =
        both(produce((short) -1, tp, "a", "b", "c"), KafkaDifferentialIT::partitionResults);
    assertSame(produced);
    assertThat(produced.get(1)).containsExactly("dup-0 NONE");
    List<Long> ends = new ArrayList<>();
    for (int port : ports()) {
      ends.add(latestOffset(port, tp) - before);
    }
    assertSame(ends);

    // Fetch: the partition named three times comes back once
    List<List<String>> fetched =
        both(
            SampleRequests.repeatedFetch(tp, 3, 1 << 20),
            (FetchResponse r) ->
                r.data().responses().stream()
                    .flatMap(
                        t ->
                            t.partitions().stream()
                                .map(
                                    p ->
                                        t.topic()
                                            + "-"
                                            + p.partitionIndex()
                                            + " "
                                            + Errors.forCode(p.errorCode())))
                    .toList());
    assertSame(fetched);
    assertThat(fetched.get(1)).containsExactly("dup-0 NONE");

    // ListOffsets: a repeated partition is answered once, refused
    ListOffsetsPartition latest =
        new ListOffsetsPartition()
            .setPartitionIndex(0)
            .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP);
    List<List<String>> listed =
        both(
            ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(
                    List.of(
                        new ListOffsetsTopic()
                            .setName("dup")
                            .setPartitions(List.of(latest, latest.duplicate()))))
                .build((short) 7),
            (ListOffsetsResponse r) ->
                r.data().topics().stream()
                    .flatMap(
                        t ->
                            t.partitions().stream()
                                .map(
                                    p ->
                                        t.name()
                                            + "-"
                                            + p.partitionIndex()
                                            + " "
                                            + Errors.forCode(p.errorCode())))
                    .toList());
    assertSame(listed);
    assertThat(listed.get(1)).containsExactly("dup-0 INVALID_REQUEST");
  }

  @Test
  void fetchSessionsAreOpenedUsedAndRefusedAsByKafka() throws Exception {
    TopicPartition first = new TopicPartition("sessions", 0);
    TopicPartition second = new TopicPartition("sessions", 1);
    List<List<String>> views = new ArrayList<>();
    for (int port : ports()) {
      List<String> view = new ArrayList<>();
      try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
        FetchResponse full = sessionFetch(client, 0, 0, List.of(first, second), List.of());
        int id = full.data().sessionId();
        view.add("full: " + fetched(full) + ", a session: " + (id != 0));
        view.add("nothing new: " + fetched(sessionFetch(client, id, 1, List.of(), List.of())));
        client.send(produce((short) 1, second, "x"));
        view.add("a write: " + fetched(sessionFetch(client, id, 2, List.of(), List.of())));
        view.add("epoch 2 again: " + fetched(sessionFetch(client, id, 2, List.of(), List.of())));
        view.add("another id: " + fetched(sessionFetch(client, id + 1, 1, List.of(), List.of())));
        FetchResponse forgotten = sessionFetch(client, id, 3, List.of(), List.of(first, second));
        view.add(
            "all forgotten: " + fetched(forgotten) + ", session " + forgotten.data().sessionId());
        view.add("then: " + fetched(sessionFetch(client, id, 4, List.of(), List.of())));
        FetchResponse last = sessionFetch(client, 0, -1, List.of(first), List.of());
        view.add("final epoch: " + fetched(last) + ", session " + last.data().sessionId());
      }
      views.add(view);
    }
    assertSame(views);
    assertThat(views.get(1))
        .containsExactly(
            "full: NONE [sessions-0 NONE hw 0 records 0, sessions-1 NONE hw 0 records 0],"
                + " a session: true",
            "nothing new: NONE []",
            "a write: NONE [sessions-1 NONE hw 1 records 1]",
            "epoch 2 again: INVALID_FETCH_SESSION_EPOCH []",
            "another id: FETCH_SESSION_ID_NOT_FOUND []",
            "all forgotten: NONE [], session 0",
            "then: FETCH_SESSION_ID_NOT_FOUND []",
            "final epoch: NONE [sessions-0 NONE hw 0 records 0], session 0");
  }

  /** A consumer's Fetch v12 in session {@code id} at {@code epoch}, from offset 0, not waiting. */
  private static FetchResponse sessionFetch(
      RawKafkaClient client,
      int id,
      int epoch,
      List<TopicPartition> asked,
      List<TopicPartition> forgotten)
      throws Exception {
    FetchRequestData data =
        new FetchRequestData()
            .setReplicaId(-1)
            .setMaxWaitMs(0)
            .setMinBytes(0)
            .setMaxBytes(1 << 20)
            .setSessionId(id)
            .setSessionEpoch(epoch);
    for (TopicPartition tp : asked) {
      data.topics()
          .add(
              new FetchRequestData.FetchTopic()
                  .setTopic(tp.topic())
                  .setPartitions(
                      List.of(
                          new FetchRequestData.FetchPartition()
                              .setPartition(tp.partition())
                              .setFetchOffset(0)
                              .setLogStartOffset(-1)
                              .setPartitionMaxBytes(1 << 20))));
    }
    for (TopicPartition tp : forgotten) {
      data.forgottenTopicsData()
          .add(
              new FetchRequestData.ForgottenTopic()
                  .setTopic(tp.topic())
                  .setPartitions(List.of(tp.partition())));
    }
    return (FetchResponse) client.send(new FetchRequest(data, (short) 12));
  }

  /** A Fetch response's error and partitions: error, high watermark and records of each. */
  private static String fetched(FetchResponse response) {
    List<String> partitions = new ArrayList<>();
    for (FetchResponseData.FetchableTopicResponse topic : response.data().responses()) {
      for (FetchResponseData.PartitionData partition : topic.partitions()) {
        int records = 0;
        for (RecordBatch batch : FetchResponse.recordsOrFail(partition).batches()) {
          records += batch.countOrNull();
        }
        partitions.add(
            String.format(
                "%s-%d %s hw %d records %d",
                topic.topic(),
                partition.partitionIndex(),
                Errors.forCode(partition.errorCode()),
                partition.highWatermark(),
                records));
      }
    }
    return Errors.forCode(response.data().errorCode()) + " " + partitions;
  }

  private static long latestOffset(int port, TopicPartition tp) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(port)) {
      ListOffsetsResponse response =
          (ListOffsetsResponse)
              client.send(
                  ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                      .setTargetTimes(
                          List.of(
                              new ListOffsetsTopic()
                                  .setName(tp.topic())
                                  .setPartitions(
                                      List.of(
                                          new ListOffsetsPartition()
                                              .setPartitionIndex(tp.partition())
                                              .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
                      .build((short) 7));
      var partition = response.data().topics().get(0).partitions().get(0);
      if (partition.errorCode() != Errors.NONE.code()) {
        throw new IllegalStateException(tp + ": " + Errors.forCode(partition.errorCode()));
      }
      return partition.offset();
    }
  }
}
