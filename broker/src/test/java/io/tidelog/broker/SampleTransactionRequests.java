package io.tidelog.broker;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;

/**
 * A valid request of every transaction API at any version, built by kafka-clients, for {@link
 * SampleRequests}: each about transactional id {@code <topic>-txn}, which no producer initialized,
 * so the coordinator answers INVALID_PRODUCER_ID_MAPPING or TRANSACTIONAL_ID_NOT_FOUND (a
 * TxnOffsetCommit, of group {@code <topic>-txn-group}, through KIP-890's verification).
 */
final class SampleTransactionRequests {
  private static final long PRODUCER_ID = 4343L;

  private SampleTransactionRequests() {}

  static AbstractRequest of(ApiKeys api, short v, String topic) {
    String transactionalId = topic + "-txn";
    TopicPartition tp = new TopicPartition(topic, 0);
    return switch (api) {
      case ADD_PARTITIONS_TO_TXN -> {
        if (v < 4) {
          yield AddPartitionsToTxnRequest.Builder.forClient(
                  transactionalId, PRODUCER_ID, (short) 0, List.of(tp))
              .build(v);
        }
        AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnTopic().setName(topic).setPartitions(List.of(0)));
        AddPartitionsToTxnTransactionCollection transactions =
            new AddPartitionsToTxnTransactionCollection();
        transactions.add(
            new AddPartitionsToTxnTransaction()
                .setTransactionalId(transactionalId)
                .setProducerId(PRODUCER_ID)
                .setProducerEpoch((short) 0)
                .setVerifyOnly(true)
                .setTopics(topics));
        yield AddPartitionsToTxnRequest.Builder.forBroker(transactions).build(v);
      }
      case ADD_OFFSETS_TO_TXN ->
          new AddOffsetsToTxnRequest.Builder(
                  new AddOffsetsToTxnRequestData()
                      .setTransactionalId(transactionalId)
                      .setProducerId(PRODUCER_ID)
                      .setProducerEpoch((short) 0)
                      .setGroupId(topic + "-group"))
              .build(v);
      case END_TXN ->
          new EndTxnRequest.Builder(
                  new EndTxnRequestData()
                      .setTransactionalId(transactionalId)
                      .setProducerId(PRODUCER_ID)
                      .setProducerEpoch((short) 0)
                      .setCommitted(true),
                  v > 4)
              .build(v);
      case TXN_OFFSET_COMMIT ->
          new TxnOffsetCommitRequest.Builder(
                  transactionalId,
                  topic + "-txn-group",
                  PRODUCER_ID,
                  (short) 0,
                  Map.of(
                      tp,
                      new TxnOffsetCommitRequest.CommittedOffset(
                          1L, "", java.util.Optional.empty())),
                  v > 4)
              .build(v);
      case DESCRIBE_TRANSACTIONS ->
          new DescribeTransactionsRequest.Builder(
                  new DescribeTransactionsRequestData()
                      .setTransactionalIds(List.of(transactionalId)))
              .build(v);
      case LIST_TRANSACTIONS ->
          new ListTransactionsRequest.Builder(new ListTransactionsRequestData()).build(v);
      default -> throw new IllegalArgumentException("Not a transaction API: " + api);
    };
  }

  /** What the coordinator answers each sample, once {@code __transaction_state} is loaded. */
  static List<Errors> expectedErrors(ApiKeys api) {
    return switch (api) {
      // v4 and up answer per transaction, beside a top-level NONE
      case ADD_PARTITIONS_TO_TXN -> List.of(Errors.NONE, Errors.INVALID_PRODUCER_ID_MAPPING);
      case ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT ->
          List.of(Errors.INVALID_PRODUCER_ID_MAPPING);
      case DESCRIBE_TRANSACTIONS -> List.of(Errors.TRANSACTIONAL_ID_NOT_FOUND);
      default -> List.of(Errors.NONE);
    };
  }
}
