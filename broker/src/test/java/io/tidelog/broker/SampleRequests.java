package io.tidelog.broker;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceDataCollection;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

/**
 * A valid request of every API the broker serves, at any version, built by kafka-clients: for tests
 * that send each version ({@link ProtocolIT}) or mutate them ({@link FuzzIT}).
 */
final class SampleRequests {
  private SampleRequests() {}

  static AbstractRequest of(ApiKeys api, short v, String topic) {
    TopicPartition tp = new TopicPartition(topic, 1);
    return switch (api) {
      case API_VERSIONS -> new ApiVersionsRequest.Builder().build(v);
      case METADATA ->
          new MetadataRequest(
              new org.apache.kafka.common.message.MetadataRequestData()
                  .setTopics(
                      List.of(
                          new org.apache.kafka.common.message.MetadataRequestData
                                  .MetadataRequestTopic()
                              .setName(topic)))
                  .setAllowAutoTopicCreation(true),
              v);
      case PRODUCE ->
          ProduceRequest.builder(
                  produceData(
                      tp,
                      MemoryRecords.withRecords(
                          Compression.NONE, new SimpleRecord("x".getBytes()))))
              .build(v);
      case FETCH ->
          FetchRequest.Builder.forConsumer(
                  v,
                  0,
                  0,
                  Map.of(
                      tp,
                      new FetchRequest.PartitionData(
                          Uuid.ZERO_UUID, 0, 0, 1 << 20, Optional.empty())))
              .build(v);
      case LIST_OFFSETS ->
          ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
              .setTargetTimes(
                  List.of(
                      new ListOffsetsTopic()
                          .setName(topic)
                          .setPartitions(
                              List.of(
                                  new ListOffsetsPartition()
                                      .setPartitionIndex(1)
                                      .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
              .build(v);
      case CREATE_TOPICS -> createTopics(topic + "-" + v, 1).build(v);
      case DELETE_TOPICS ->
          new DeleteTopicsRequest.Builder(
                  v >= 6
                      ? new DeleteTopicsRequestData()
                          .setTopics(List.of(new DeleteTopicState().setName(topic + "-" + (v + 1))))
                      : new DeleteTopicsRequestData().setTopicNames(List.of(topic + "-" + (v + 1))))
              .build(v);
      case INIT_PRODUCER_ID ->
          new InitProducerIdRequest.Builder(
                  new InitProducerIdRequestData()
                      .setTransactionalId(null)
                      .setTransactionTimeoutMs(60_000))
              .build(v);
      case OFFSET_FOR_LEADER_EPOCH -> {
        var topics =
            new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData
                .OffsetForLeaderTopicCollection();
        topics.add(
            new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData
                    .OffsetForLeaderTopic()
                .setTopic(topic)
                .setPartitions(
                    List.of(
                        new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData
                                .OffsetForLeaderPartition()
                            .setPartition(1)
                            .setLeaderEpoch(0)
                            .setCurrentLeaderEpoch(-1))));
        // kafka-clients' builders no longer build v2 (no replica id field); brokers still serve it
        yield new org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest(
            new org.apache.kafka.common.message.OffsetForLeaderEpochRequestData().setTopics(topics),
            v);
      }
      case DELETE_RECORDS ->
          new org.apache.kafka.common.requests.DeleteRecordsRequest.Builder(
                  new org.apache.kafka.common.message.DeleteRecordsRequestData()
                      .setTimeoutMs(10_000)
                      .setTopics(
                          List.of(
                              new org.apache.kafka.common.message.DeleteRecordsRequestData
                                      .DeleteRecordsTopic()
                                  .setName(topic)
                                  .setPartitions(
                                      List.of(
                                          new org.apache.kafka.common.message
                                                  .DeleteRecordsRequestData.DeleteRecordsPartition()
                                              .setPartitionIndex(1)
                                              .setOffset(0))))))
              .build(v);
      case CREATE_PARTITIONS -> {
        var topics =
            new org.apache.kafka.common.message.CreatePartitionsRequestData
                .CreatePartitionsTopicCollection();
        topics.add(
            new org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic()
                .setName(topic)
                .setCount(3 + v)
                .setAssignments(null));
        yield new org.apache.kafka.common.requests.CreatePartitionsRequest.Builder(
                new org.apache.kafka.common.message.CreatePartitionsRequestData()
                    .setTopics(topics)
                    .setTimeoutMs(10_000))
            .build(v);
      }
      case DESCRIBE_CONFIGS ->
          new org.apache.kafka.common.requests.DescribeConfigsRequest.Builder(
                  new org.apache.kafka.common.message.DescribeConfigsRequestData()
                      .setResources(
                          List.of(
                              new org.apache.kafka.common.message.DescribeConfigsRequestData
                                      .DescribeConfigsResource()
                                  .setResourceType(ConfigResource.Type.TOPIC.id())
                                  .setResourceName(topic)
                                  .setConfigurationKeys(null))))
              .build(v);
      case ALTER_CONFIGS ->
          new org.apache.kafka.common.requests.AlterConfigsRequest.Builder(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.TOPIC, topic),
                      new org.apache.kafka.common.requests.AlterConfigsRequest.Config(
                          List.of(
                              new org.apache.kafka.common.requests.AlterConfigsRequest.ConfigEntry(
                                  "retention.ms", "86400000")))),
                  false)
              .build(v);
      case INCREMENTAL_ALTER_CONFIGS ->
          new org.apache.kafka.common.requests.IncrementalAlterConfigsRequest.Builder(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.TOPIC, topic),
                      List.of(
                          new org.apache.kafka.clients.admin.AlterConfigOp(
                              new org.apache.kafka.clients.admin.ConfigEntry(
                                  "retention.bytes", "1000000000"),
                              org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))),
                  false)
              .build(v);
      case DESCRIBE_LOG_DIRS ->
          new org.apache.kafka.common.requests.DescribeLogDirsRequest.Builder(
                  new org.apache.kafka.common.message.DescribeLogDirsRequestData().setTopics(null))
              .build(v);
      case ALTER_REPLICA_LOG_DIRS -> {
        var data = new org.apache.kafka.common.message.AlterReplicaLogDirsRequestData();
        var dir =
            new org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir()
                .setPath("/no-such-log-dir");
        dir.topics()
            .add(
                new org.apache.kafka.common.message.AlterReplicaLogDirsRequestData
                        .AlterReplicaLogDirTopic()
                    .setName(topic)
                    .setPartitions(List.of(0)));
        data.dirs().add(dir);
        yield new org.apache.kafka.common.requests.AlterReplicaLogDirsRequest.Builder(data)
            .build(v);
      }
      case DESCRIBE_PRODUCERS -> {
        var data = new org.apache.kafka.common.message.DescribeProducersRequestData();
        data.topics()
            .add(
                new org.apache.kafka.common.message.DescribeProducersRequestData.TopicRequest()
                    .setName(topic)
                    .setPartitionIndexes(List.of(0)));
        yield new org.apache.kafka.common.requests.DescribeProducersRequest.Builder(data).build(v);
      }
      case WRITE_TXN_MARKERS ->
          new org.apache.kafka.common.requests.WriteTxnMarkersRequest.Builder(
                  List.of(
                      new org.apache.kafka.common.requests.WriteTxnMarkersRequest.TxnMarkerEntry(
                          4242L,
                          (short) 0,
                          0,
                          org.apache.kafka.common.requests.TransactionResult.ABORT,
                          List.of(new org.apache.kafka.common.TopicPartition(topic, 0)))))
              .build(v);
      case ELECT_LEADERS ->
          new org.apache.kafka.common.requests.ElectLeadersRequest.Builder(
                  org.apache.kafka.common.ElectionType.PREFERRED,
                  List.of(new org.apache.kafka.common.TopicPartition(topic, 0)),
                  30_000)
              .build(v);
      case ALTER_PARTITION_REASSIGNMENTS ->
          new org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest.Builder(
                  new org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData()
                      .setTopics(
                          List.of(
                              new org.apache.kafka.common.message
                                      .AlterPartitionReassignmentsRequestData.ReassignableTopic()
                                  .setName(topic)
                                  .setPartitions(
                                      List.of(
                                          new org.apache.kafka.common.message
                                                  .AlterPartitionReassignmentsRequestData
                                                  .ReassignablePartition()
                                              .setPartitionIndex(0)
                                              .setReplicas(null))))))
              .build(v);
      case LIST_PARTITION_REASSIGNMENTS ->
          new org.apache.kafka.common.requests.ListPartitionReassignmentsRequest.Builder(
                  new org.apache.kafka.common.message.ListPartitionReassignmentsRequestData())
              .build(v);
      case DESCRIBE_CLUSTER ->
          new org.apache.kafka.common.requests.DescribeClusterRequest.Builder(
                  new org.apache.kafka.common.message.DescribeClusterRequestData())
              .build(v);
      case SASL_HANDSHAKE,
          SASL_AUTHENTICATE,
          DESCRIBE_USER_SCRAM_CREDENTIALS,
          ALTER_USER_SCRAM_CREDENTIALS,
          CREATE_ACLS,
          DESCRIBE_ACLS,
          DELETE_ACLS,
          DESCRIBE_CLIENT_QUOTAS,
          ALTER_CLIENT_QUOTAS ->
          SampleSecurityRequests.of(api, v, topic);
      case ADD_PARTITIONS_TO_TXN,
          ADD_OFFSETS_TO_TXN,
          END_TXN,
          TXN_OFFSET_COMMIT,
          DESCRIBE_TRANSACTIONS,
          LIST_TRANSACTIONS ->
          SampleTransactionRequests.of(api, v, topic);
      default -> SampleGroupRequests.of(api, v, topic);
    };
  }

  static CreateTopicsRequest.Builder createTopics(String name, int partitions) {
    CreatableTopicCollection topics = new CreatableTopicCollection();
    topics.add(
        new CreatableTopic()
            .setName(name)
            .setNumPartitions(partitions)
            .setReplicationFactor((short) 1));
    return new CreateTopicsRequest.Builder(
        new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(10_000));
  }

  static ProduceRequestData produceData(TopicPartition tp, MemoryRecords records) {
    TopicProduceDataCollection topics = new TopicProduceDataCollection();
    topics.add(
        new TopicProduceData()
            .setName(tp.topic())
            .setPartitionData(
                List.of(new PartitionProduceData().setIndex(tp.partition()).setRecords(records))));
    return new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000).setTopicData(topics);
  }

  /** A consumer's Fetch v12 naming {@code tp} {@code times} times, from offset 0. */
  static FetchRequest repeatedFetch(TopicPartition tp, int times, int maxBytes) {
    FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic().setTopic(tp.topic());
    for (int i = 0; i < times; i++) {
      topic
          .partitions()
          .add(
              new FetchRequestData.FetchPartition()
                  .setPartition(tp.partition())
                  .setFetchOffset(0)
                  .setPartitionMaxBytes(1 << 20)
                  .setLogStartOffset(-1)
                  .setCurrentLeaderEpoch(-1)
                  .setLastFetchedEpoch(-1));
    }
    return new FetchRequest(
        new FetchRequestData()
            .setReplicaId(-1)
            .setMaxWaitMs(0)
            .setMinBytes(0)
            .setMaxBytes(maxBytes)
            .setIsolationLevel(IsolationLevel.READ_UNCOMMITTED.id())
            .setSessionId(0)
            .setSessionEpoch(-1)
            .setTopics(List.of(topic)),
        (short) 12);
  }

  /** A Produce v9 with one entry for {@code tp} per batch, in order. */
  static ProduceRequest repeatedProduce(
      short acks, TopicPartition tp, List<MemoryRecords> batches) {
    List<PartitionProduceData> entries = new ArrayList<>();
    for (MemoryRecords batch : batches) {
      entries.add(new PartitionProduceData().setIndex(tp.partition()).setRecords(batch));
    }
    TopicProduceDataCollection topics = new TopicProduceDataCollection();
    topics.add(new TopicProduceData().setName(tp.topic()).setPartitionData(entries));
    return new ProduceRequest(
        new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics),
        (short) 9);
  }

  /** The error of a Produce response's first partition. */
  static Errors firstError(ProduceResponse response) {
    return Errors.forCode(
        response.data().responses().iterator().next().partitionResponses().get(0).errorCode());
  }
}
