package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
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
    return Errors.forCode(
        ((EndTxnResponse)
                client.send(
                    new EndTxnRequest.Builder(
                            new EndTxnRequestData()
                                .setTransactionalId(TX)
                                .setProducerId(pid)
                                .setProducerEpoch(epoch)
                                .setCommitted(commit),
                            false)
                        .build((short) 3)))
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
    ProduceRequest request =
        new ProduceRequest(
            SampleRequests.repeatedProduce(
                    (short) -1,
                    tp(0),
                    List.of(
                        MemoryRecords.withTransactionalRecords(
                            Compression.NONE, pid, epoch, 0, new SimpleRecord("v".getBytes()))))
                .data()
                .setTransactionalId(TX),
            (short) 9);
    return SampleRequests.firstError((ProduceResponse) client.send(request));
  }
}
