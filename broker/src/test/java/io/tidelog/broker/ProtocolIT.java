package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicCollection;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
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
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every advertised version of every API, built and parsed by kafka-clients, and the bad input of
 * the issue: oversize, garbage and truncated frames, unknown APIs and versions, and invalid
 * batches. After each, the broker must still serve.
 */
class ProtocolIT {
  private static final int REQUEST_MAX_BYTES = 2 << 20;
  @TempDir static Path logDir;
  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker =
        TestBroker.start(
            logDir, Map.of("socket.request.max.bytes", String.valueOf(REQUEST_MAX_BYTES)));
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  private static AbstractResponse send(AbstractRequest request) throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      return client.send(request);
    }
  }

  private static ApiVersionsResponse apiVersions() throws Exception {
    return (ApiVersionsResponse) send(new ApiVersionsRequest.Builder().build((short) 3));
  }

  private static void assertBrokerServes() throws Exception {
    assertThat(apiVersions().data().errorCode()).isEqualTo(Errors.NONE.code());
  }

  @Test
  void everyAdvertisedVersionOfEveryApiIsServed() throws Exception {
    // Given the advertised ranges; when each version of each API is sent; then it is answered
    // without error (Produce v0-2 are advertised for librdkafka's sake and refused)
    send(createTopics("versions", 2));
    int served = 0;
    for (ApiVersion range : apiVersions().data().apiKeys()) {
      ApiKeys api = ApiKeys.forId(range.apiKey());
      for (short v = range.minVersion(); v <= range.maxVersion(); v++) {
        if (api == ApiKeys.PRODUCE && v < 3) {
          continue;
        }
        AbstractResponse response = send(requestFor(api, v));
        assertThat(response.errorCounts().keySet())
            .as("%s v%d", api, v)
            .isSubsetOf(expectedErrors(api));
        served++;
      }
    }
    assertThat(served).isGreaterThan(40);
  }

  private static java.util.Set<Errors> expectedErrors(ApiKeys api) {
    // CreateTopics/DeleteTopics repeat per version: their second call hits the first's result.
    return switch (api) {
      case CREATE_TOPICS -> java.util.Set.of(Errors.NONE, Errors.TOPIC_ALREADY_EXISTS);
      default -> java.util.Set.of(Errors.NONE);
    };
  }

  private static AbstractRequest requestFor(ApiKeys api, short v) {
    TopicPartition tp = new TopicPartition("versions", 1);
    return switch (api) {
      case API_VERSIONS -> new ApiVersionsRequest.Builder().build(v);
      case METADATA ->
          new MetadataRequest(
              new org.apache.kafka.common.message.MetadataRequestData()
                  .setTopics(
                      List.of(
                          new org.apache.kafka.common.message.MetadataRequestData
                                  .MetadataRequestTopic()
                              .setName("versions")))
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
                          .setName("versions")
                          .setPartitions(
                              List.of(
                                  new ListOffsetsPartition()
                                      .setPartitionIndex(1)
                                      .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
              .build(v);
      case CREATE_TOPICS -> createTopics("versions-" + v, 1).build(v);
      case DELETE_TOPICS ->
          new DeleteTopicsRequest.Builder(
                  v >= 6
                      ? new DeleteTopicsRequestData()
                          .setTopics(List.of(new DeleteTopicState().setName("versions-" + (v + 1))))
                      : new DeleteTopicsRequestData().setTopicNames(List.of("versions-" + (v + 1))))
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
                .setTopic("versions")
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
                                  .setName("versions")
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
                .setName("versions")
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
                                  .setResourceName("versions")
                                  .setConfigurationKeys(null))))
              .build(v);
      case ALTER_CONFIGS ->
          new org.apache.kafka.common.requests.AlterConfigsRequest.Builder(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.TOPIC, "versions"),
                      new org.apache.kafka.common.requests.AlterConfigsRequest.Config(
                          List.of(
                              new org.apache.kafka.common.requests.AlterConfigsRequest.ConfigEntry(
                                  "retention.ms", "86400000")))),
                  false)
              .build(v);
      case INCREMENTAL_ALTER_CONFIGS ->
          new org.apache.kafka.common.requests.IncrementalAlterConfigsRequest.Builder(
                  Map.of(
                      new ConfigResource(ConfigResource.Type.TOPIC, "versions"),
                      List.of(
                          new org.apache.kafka.clients.admin.AlterConfigOp(
                              new org.apache.kafka.clients.admin.ConfigEntry(
                                  "retention.bytes", "1000000000"),
                              org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))),
                  false)
              .build(v);
      case DESCRIBE_CLUSTER ->
          new org.apache.kafka.common.requests.DescribeClusterRequest.Builder(
                  new org.apache.kafka.common.message.DescribeClusterRequestData())
              .build(v);
      default -> throw new AssertionError("advertised but not covered by this test: " + api);
    };
  }

  private static CreateTopicsRequest.Builder createTopics(String name, int partitions) {
    CreatableTopicCollection topics = new CreatableTopicCollection();
    topics.add(
        new CreatableTopic()
            .setName(name)
            .setNumPartitions(partitions)
            .setReplicationFactor((short) 1));
    return new CreateTopicsRequest.Builder(
        new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(10_000));
  }

  private static AbstractResponse send(CreateTopicsRequest.Builder builder) throws Exception {
    return send(builder.build());
  }

  private static ProduceRequestData produceData(TopicPartition tp, MemoryRecords records) {
    TopicProduceDataCollection topics = new TopicProduceDataCollection();
    topics.add(
        new TopicProduceData()
            .setName(tp.topic())
            .setPartitionData(
                List.of(new PartitionProduceData().setIndex(tp.partition()).setRecords(records))));
    return new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000).setTopicData(topics);
  }

  /** Produces {@code records}, damaged by {@code damage} after kafka-clients built the request. */
  private static Errors produceError(
      MemoryRecords records, java.util.function.Consumer<ByteBuffer> damage) throws Exception {
    TopicPartition tp = new TopicPartition("bad-batches", 0);
    ProduceRequest request = ProduceRequest.builder(produceData(tp, records)).build((short) 9);
    damage.accept(records.buffer());
    ProduceResponse response = (ProduceResponse) send(request);
    return Errors.forCode(
        response.data().responses().iterator().next().partitionResponses().get(0).errorCode());
  }

  private static MemoryRecords batch(byte[]... values) {
    return MemoryRecords.withRecords(
        Compression.NONE,
        java.util.Arrays.stream(values).map(SimpleRecord::new).toArray(SimpleRecord[]::new));
  }

  private static void rewriteCrc(ByteBuffer batch) {
    long crc = org.apache.kafka.common.utils.Crc32C.compute(batch, 21, batch.limit() - 21);
    batch.putInt(17, (int) crc);
  }

  private static long logEndOffset(String topic) throws Exception {
    FetchResponse response =
        (FetchResponse)
            send(
                FetchRequest.Builder.forConsumer(
                        (short) 12,
                        0,
                        0,
                        Map.of(
                            new TopicPartition(topic, 0),
                            new FetchRequest.PartitionData(
                                Uuid.ZERO_UUID, 0, 0, 1 << 20, Optional.empty())))
                    .build((short) 12));
    return response.data().responses().get(0).partitions().get(0).highWatermark();
  }

  @Test
  void invalidBatchesGetTheirErrorCodesAndNothingReachesTheLog() throws Exception {
    send(createTopics("bad-batches", 1));
    assertThat(produceError(batch("ok".getBytes()), b -> {})).isEqualTo(Errors.NONE);

    // Kafka's v2 batch layout: magic at byte 16, CRC at 17 (over bytes 21..), record count at 57
    assertThat(produceError(batch("x".getBytes()), b -> b.put(b.limit() - 1, (byte) 0x55)))
        .isEqualTo(Errors.CORRUPT_MESSAGE);
    assertThat(
            produceError(
                batch("x".getBytes(), "y".getBytes()),
                b -> {
                  b.putInt(57, 5);
                  rewriteCrc(b);
                }))
        .isEqualTo(Errors.INVALID_RECORD);
    assertThat(produceError(batch("x".getBytes()), b -> b.put(16, RecordBatch.MAGIC_VALUE_V1)))
        .isIn(Errors.INVALID_RECORD, Errors.CORRUPT_MESSAGE);
    assertThat(produceError(batch(new byte[1_100_000]), b -> {}))
        .isEqualTo(Errors.MESSAGE_TOO_LARGE);
    assertThat(logEndOffset("bad-batches")).isEqualTo(1);
  }

  @Test
  void anOversizeFrameClosesOnlyThatConnection() throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(ByteBuffer.allocate(4).putInt(REQUEST_MAX_BYTES + 1).array());
      assertThat(client.closedByBroker()).isTrue();
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(ByteBuffer.allocate(4).putInt(-5).array());
      assertThat(client.closedByBroker()).isTrue();
    }
    assertBrokerServes();
  }

  @Test
  void garbageTruncatedFramesAndUnknownApisCloseTheConnection() throws Exception {
    Random random = new Random(1);
    for (int i = 0; i < 20; i++) {
      byte[] garbage = new byte[8 + random.nextInt(200)];
      random.nextBytes(garbage);
      garbage[0] = 0; // a plausible API key high byte, so that parsing goes deeper
      try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
        client.sendFrame(ByteBuffer.wrap(garbage));
        assertThat(client.closedByBroker()).as("garbage %d", i).isTrue();
      }
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendBytes(new byte[] {0, 0, 0, 100, 0, 18, 0}); // 7 of 104 bytes, then the client goes
    }
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendFrame(
          ByteBuffer.allocate(10)
              .putShort((short) 999)
              .putShort((short) 0)
              .putInt(1)
              .putShort((short) -1)
              .flip());
      assertThat(client.closedByBroker()).isTrue();
    }
    assertBrokerServes();
  }

  @Test
  void anUnknownApiVersionsVersionGetsAV0ErrorResponse() throws Exception {
    try (RawKafkaClient client = new RawKafkaClient(broker.port)) {
      client.sendFrame(
          ByteBuffer.allocate(10)
              .putShort(ApiKeys.API_VERSIONS.id)
              .putShort((short) 99)
              .putInt(7)
              .putShort((short) -1)
              .flip());
      ByteBuffer response = ByteBuffer.wrap(client.readFrame());

      assertThat(response.getInt()).isEqualTo(7); // v0 response header: the correlation id only
      ApiVersionsResponse body =
          (ApiVersionsResponse)
              AbstractResponse.parseResponse(
                  ApiKeys.API_VERSIONS,
                  new org.apache.kafka.common.protocol.ByteBufferAccessor(response),
                  (short) 0);
      assertThat(body.data().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
      assertThat(body.data().apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
    }
  }
}
