package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest.CommittedOffset;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A transactional producer's conversation with the coordinator and a leader, sent as raw requests
 * to Apache Kafka 4.1 and to Tidelog: every answer, step by step, must be Kafka's, including the
 * wrong moves a buggy or zombie producer makes.
 */
class TransactionDifferentialIT {
  private static final String TOPIC = "txn-diff";
  private static final String TX = "txn-diff-id";
  private static final String TX_V2 = "txn-diff-v2";
  private static final String GROUP = "txn-diff-group";

  @TempDir static Path kafkaDir;
  @TempDir static Path tidelogDir;
  static ApacheKafka kafka;
  static TestBroker tidelog;

  @BeforeAll
  static void start() throws Exception {
    kafka = ApacheKafka.start(kafkaDir);
    tidelog = TestBroker.start(tidelogDir, Map.of());
    for (int port : List.of(kafka.port, tidelog.port)) {
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
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

  @Test
  void aProducersConversationIsAnsweredAsByKafka() throws Exception {
    List<String> kafkaAnswers = conversation(kafka.port);
    List<String> tidelogAnswers = conversation(tidelog.port);
    assertThat(kafkaAnswers)
        .as("Apache Kafka's answers")
        .containsExactly(
            "find coordinator: NONE",
            "init: NONE epoch=0",
            "timeout over the maximum: INVALID_TRANSACTION_TIMEOUT",
            "producer id without epoch: INVALID_REQUEST",
            "end an empty transaction: INVALID_TXN_STATE",
            "produce to a partition not added: INVALID_TXN_STATE",
            "add a known and an unknown partition: {txn-diff-0=OPERATION_NOT_ATTEMPTED,"
                + " txn-diff-9=UNKNOWN_TOPIC_OR_PARTITION}",
            "add with an older epoch (v3): PRODUCER_FENCED",
            "add with an older epoch (v1): INVALID_PRODUCER_EPOCH",
            "add: NONE",
            "produce to the added partition: NONE",
            "init again (the open transaction is aborted): CONCURRENT_TRANSACTIONS",
            "init again: NONE epoch=2",
            "commit with the fenced epoch: PRODUCER_FENCED",
            "abort an empty transaction: INVALID_TXN_STATE");
    assertThat(tidelogAnswers).as("Tidelog's answers").isEqualTo(kafkaAnswers);
  }

  @Test
  void aConversationOfTransactionProtocol2IsAnsweredAsByKafka() throws Exception {
    List<String> kafkaAnswers = conversationV2(kafka.port);
    List<String> tidelogAnswers = conversationV2(tidelog.port);
    assertThat(kafkaAnswers)
        .as("Apache Kafka's answers")
        .containsExactly(
            "transaction.version finalized: 2",
            "init: NONE epoch=0",
            "produce v12 (adds the partition): NONE",
            "commit v5: NONE epoch=1 same id",
            "commit v5 again (a retry): NONE epoch=1 same id",
            "produce v12 at the committed epoch: INVALID_PRODUCER_EPOCH",
            "abort v5 with no transaction: NONE epoch=2 same id",
            "commit v5 with no transaction: INVALID_TXN_STATE",
            "produce v12 at the new epoch: NONE",
            "txn offset commit v5 (adds the offsets partition): NONE",
            "commit v5 with the epoch before: PRODUCER_FENCED",
            "abort v5: NONE epoch=3 same id",
            "abort v4 again: NONE",
            "produce v11 to a partition not added: TRANSACTION_ABORTABLE");
    assertThat(tidelogAnswers).as("Tidelog's answers").isEqualTo(kafkaAnswers);
  }

  private static List<String> conversationV2(int port) throws Exception {
    List<String> answers = new ArrayList<>();
    try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
      ApiVersionsResponse versions =
          (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder().build((short) 3));
      answers.add(
          "transaction.version finalized: "
              + versions.data().finalizedFeatures().find("transaction.version").maxVersionLevel());
      untilReady(() -> findCoordinator(client, (byte) 1, TX_V2));
      untilReady(() -> findCoordinator(client, (byte) 0, GROUP));
      InitProducerIdResponse init =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      (InitProducerIdResponse)
                          client.send(
                              new InitProducerIdRequest.Builder(
                                      new InitProducerIdRequestData()
                                          .setTransactionalId(TX_V2)
                                          .setTransactionTimeoutMs(60_000))
                                  .build((short) 5)),
                  r -> untilReadyDone(r.error()));
      long pid = init.data().producerId();
      short epoch = init.data().producerEpoch();
      answers.add("init: " + init.error() + " epoch=" + epoch);
      answers.add(
          "produce v12 (adds the partition): " + produce(client, TX_V2, pid, epoch, 0, 0, 12));
      answers.add("commit v5: " + endTxnV5(client, pid, epoch, true));
      untilState(client, "CompleteCommit");
      answers.add("commit v5 again (a retry): " + endTxnV5(client, pid, epoch, true));
      answers.add(
          "produce v12 at the committed epoch: " + produce(client, TX_V2, pid, epoch, 0, 1, 12));
      answers.add(
          "abort v5 with no transaction: " + endTxnV5(client, pid, (short) (epoch + 1), false));
      untilState(client, "CompleteAbort");
      answers.add(
          "commit v5 with no transaction: "
              + endTxnV5(client, pid, (short) (epoch + 2), true).split(" ")[0]);
      answers.add(
          "produce v12 at the new epoch: "
              + produce(client, TX_V2, pid, (short) (epoch + 2), 1, 0, 12));
      answers.add(
          "txn offset commit v5 (adds the offsets partition): "
              + untilReady(() -> txnOffsetCommitV5(client, pid, (short) (epoch + 2))));
      answers.add(
          "commit v5 with the epoch before: "
              + endTxnV5(client, pid, (short) (epoch + 1), true).split(" ")[0]);
      answers.add("abort v5: " + endTxnV5(client, pid, (short) (epoch + 2), false));
      untilState(client, "CompleteAbort");
      answers.add("abort v4 again: " + endTxn(client, TX_V2, pid, (short) (epoch + 3), false, 4));
      answers.add(
          "produce v11 to a partition not added: "
              + produce(client, TX_V2, pid, (short) (epoch + 3), 0, 0, 11));
      return answers.stream().map(a -> a.replace(" id=" + pid, " same id")).toList();
    }
  }

  private static Errors findCoordinator(RawKafkaClient client, byte keyType, String key)
      throws Exception {
    return Errors.forCode(
        ((FindCoordinatorResponse)
                client.send(
                    new FindCoordinatorRequest.Builder(
                            new FindCoordinatorRequestData()
                                .setKeyType(keyType)
                                .setCoordinatorKeys(List.of(key)))
                        .build((short) 4)))
            .data()
            .coordinators()
            .get(0)
            .errorCode());
  }

  /** Waits until DescribeTransactions shows the id in {@code state}: its markers are written. */
  private static void untilState(RawKafkaClient client, String state) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                ((DescribeTransactionsResponse)
                        client.send(
                            new DescribeTransactionsRequest.Builder(
                                    new DescribeTransactionsRequestData()
                                        .setTransactionalIds(List.of(TX_V2)))
                                .build((short) 0)))
                    .data()
                    .transactionStates()
                    .get(0)
                    .transactionState(),
            state::equals);
  }

  /** EndTxn v5's answer: its error, and the epoch (and id) for the next transaction. */
  private static String endTxnV5(RawKafkaClient client, long pid, short epoch, boolean commit)
      throws Exception {
    EndTxnResponse response =
        (EndTxnResponse)
            client.send(
                new EndTxnRequest.Builder(
                        new EndTxnRequestData()
                            .setTransactionalId(TX_V2)
                            .setProducerId(pid)
                            .setProducerEpoch(epoch)
                            .setCommitted(commit),
                        true)
                    .build((short) 5));
    return response.error()
        + " epoch="
        + response.data().producerEpoch()
        + " id="
        + response.data().producerId();
  }

  private static Errors txnOffsetCommitV5(RawKafkaClient client, long pid, short epoch)
      throws Exception {
    TxnOffsetCommitResponse response =
        (TxnOffsetCommitResponse)
            client.send(
                new TxnOffsetCommitRequest.Builder(
                        TX_V2,
                        GROUP,
                        pid,
                        epoch,
                        Map.of(tp(0), new CommittedOffset(3, "", Optional.empty())),
                        true)
                    .build((short) 5));
    return response.errors().get(tp(0));
  }

  private static List<String> conversation(int port) throws Exception {
    List<String> answers = new ArrayList<>();
    try (RawKafkaClient client = new RawKafkaClient(port, 60_000)) {
      answers.add(
          "find coordinator: "
              + untilReady(
                  () ->
                      Errors.forCode(
                          ((FindCoordinatorResponse)
                                  client.send(
                                      new FindCoordinatorRequest.Builder(
                                              new FindCoordinatorRequestData()
                                                  .setKeyType((byte) 1)
                                                  .setCoordinatorKeys(List.of(TX)))
                                          .build((short) 4)))
                              .data()
                              .coordinators()
                              .get(0)
                              .errorCode())));
      InitProducerIdResponse first =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () -> init(client, new InitProducerIdRequestData()),
                  r -> untilReadyDone(r.error()));
      answers.add("init: " + first.error() + " epoch=" + first.data().producerEpoch());
      answers.add(
          "timeout over the maximum: "
              + init(client, new InitProducerIdRequestData().setTransactionTimeoutMs(900_001))
                  .error());
      answers.add(
          "producer id without epoch: "
              + init(
                      client,
                      new InitProducerIdRequestData().setProducerId(5).setProducerEpoch((short) -1))
                  .error());
      long pid = first.data().producerId();
      short epoch = first.data().producerEpoch();
      answers.add("end an empty transaction: " + endTxn(client, pid, epoch, true));
      answers.add("produce to a partition not added: " + produce(client, pid, epoch));
      answers.add(
          "add a known and an unknown partition: "
              + sorted(add(client, pid, epoch, (short) 3, List.of(tp(0), tp(9)))));
      answers.add(
          "add with an older epoch (v3): "
              + add(client, pid, (short) (epoch - 1), (short) 3, List.of(tp(0))).get(tp(0)));
      answers.add(
          "add with an older epoch (v1): "
              + add(client, pid, (short) (epoch - 1), (short) 1, List.of(tp(0))).get(tp(0)));
      answers.add("add: " + add(client, pid, epoch, (short) 3, List.of(tp(0))).get(tp(0)));
      answers.add("produce to the added partition: " + produce(client, pid, epoch));
      answers.add(
          "init again (the open transaction is aborted): "
              + init(client, new InitProducerIdRequestData()).error());
      InitProducerIdResponse second =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () -> init(client, new InitProducerIdRequestData()),
                  r -> r.error() != Errors.CONCURRENT_TRANSACTIONS);
      answers.add("init again: " + second.error() + " epoch=" + second.data().producerEpoch());
      answers.add("commit with the fenced epoch: " + endTxn(client, pid, epoch, true));
      answers.add(
          "abort an empty transaction: "
              + endTxn(client, second.data().producerId(), second.data().producerEpoch(), false));
    }
    return answers;
  }

  private static Map<String, Errors> sorted(Map<TopicPartition, Errors> errors) {
    Map<String, Errors> byName = new java.util.TreeMap<>();
    errors.forEach((tp, error) -> byName.put(tp.toString(), error));
    return byName;
  }

  private static TopicPartition tp(int partition) {
    return new TopicPartition(TOPIC, partition);
  }

  /** Asked again while the coordinator is not ready (the topic is new, or it loads). */
  private static Errors untilReady(Callable<Errors> ask) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .until(ask, TransactionDifferentialIT::untilReadyDone);
  }

  private static boolean untilReadyDone(Errors e) {
    return e != Errors.COORDINATOR_NOT_AVAILABLE
        && e != Errors.COORDINATOR_LOAD_IN_PROGRESS
        && e != Errors.NOT_COORDINATOR;
  }

  private static InitProducerIdResponse init(RawKafkaClient client, InitProducerIdRequestData data)
      throws Exception {
    InitProducerIdRequestData request =
        data.setTransactionalId(TX)
            .setTransactionTimeoutMs(
                data.transactionTimeoutMs() == 0 ? 60_000 : data.transactionTimeoutMs());
    return (InitProducerIdResponse)
        client.send(new InitProducerIdRequest.Builder(request).build((short) 4));
  }

  private static Errors endTxn(RawKafkaClient client, long pid, short epoch, boolean commit)
      throws Exception {
    return endTxn(client, TX, pid, epoch, commit, 3);
  }

  private static Errors endTxn(
      RawKafkaClient client, String id, long pid, short epoch, boolean commit, int version)
      throws Exception {
    return Errors.forCode(
        ((EndTxnResponse)
                client.send(
                    new EndTxnRequest.Builder(
                            new EndTxnRequestData()
                                .setTransactionalId(id)
                                .setProducerId(pid)
                                .setProducerEpoch(epoch)
                                .setCommitted(commit),
                            false)
                        .build((short) version)))
            .data()
            .errorCode());
  }

  private static Map<TopicPartition, Errors> add(
      RawKafkaClient client, long pid, short epoch, short version, List<TopicPartition> tps)
      throws Exception {
    AddPartitionsToTxnResponse response =
        (AddPartitionsToTxnResponse)
            client.send(
                AddPartitionsToTxnRequest.Builder.forClient(TX, pid, epoch, tps).build(version));
    return response.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID);
  }

  private static Errors produce(RawKafkaClient client, long pid, short epoch) throws Exception {
    return produce(client, TX, pid, epoch, 0, 0, 9);
  }

  private static Errors produce(
      RawKafkaClient client,
      String id,
      long pid,
      short epoch,
      int partition,
      int sequence,
      int version)
      throws Exception {
    ProduceRequest request =
        new ProduceRequest(
            SampleRequests.repeatedProduce(
                    (short) -1,
                    tp(partition),
                    List.of(
                        MemoryRecords.withTransactionalRecords(
                            Compression.NONE,
                            pid,
                            epoch,
                            sequence,
                            new SimpleRecord("v".getBytes()))))
                .data()
                .setTransactionalId(id),
            (short) version);
    return SampleRequests.firstError((ProduceResponse) client.send(request));
  }
}
