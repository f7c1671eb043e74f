package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The per-partition offset APIs: ListOffsets (earliest, latest = the high watermark, by timestamp;
 * a partition named more than once is answered once, with INVALID_REQUEST, as Kafka answers),
 * OffsetForLeaderEpoch and DeleteRecords.
 *
 * <p>Authorized as in Kafka: ListOffsets needs DESCRIBE on the topic; OffsetForLeaderEpoch
 * CLUSTER_ACTION on the cluster (a follower) or DESCRIBE on the topic; DeleteRecords DELETE on the
 * topic. A partition that fails it is answered TOPIC_AUTHORIZATION_FAILED and not looked at.
 */
public final class OffsetsHandler {
  private final ReplicaManager replicas;
  private final Authorization authorization;

  public OffsetsHandler(ReplicaManager replicas, Authorization authorization) {
    this.replicas = replicas;
    this.authorization = authorization;
  }

  CompletableFuture<ListOffsetsResponse> listOffsets(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    ListOffsetsRequest listOffsets = (ListOffsetsRequest) request;
    Set<TopicPartition> duplicates = listOffsets.duplicatePartitions();
    IsolationLevel isolation = IsolationLevel.forId(listOffsets.data().isolationLevel());
    ListOffsetsResponseData data = new ListOffsetsResponseData();
    List<CompletableFuture<Void>> lookups = new ArrayList<>();
    Set<TopicPartition> answered = new HashSet<>();
    for (ListOffsetsTopic topic : listOffsets.data().topics()) {
      ListOffsetsTopicResponse topicResponse = new ListOffsetsTopicResponse().setName(topic.name());
      data.topics().add(topicResponse);
      for (ListOffsetsPartition partition : topic.partitions()) {
        TopicPartition tp = new TopicPartition(topic.name(), partition.partitionIndex());
        if (!answered.add(tp)) {
          continue;
        }
        ListOffsetsPartitionResponse response =
            new ListOffsetsPartitionResponse()
                .setPartitionIndex(partition.partitionIndex())
                .setTimestamp(RecordBatch.NO_TIMESTAMP)
                .setOffset(-1);
        topicResponse.partitions().add(response);
        if (!describable.test(tp.topic())) {
          response.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
          continue;
        }
        if (duplicates.contains(tp)) {
          response.setErrorCode(Errors.INVALID_REQUEST.code());
          continue;
        }
        lookups.add(
            lookup(tp, partition.timestamp(), isolation, response)
                .exceptionally(
                    e -> {
                      response.setErrorCode(ErrorMapping.errorOf(e, header).code());
                      return null;
                    }));
      }
    }
    return CompletableFuture.allOf(lookups.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              if (header.apiVersion() < 4) { // the leader epoch field exists from v4 on
                data.topics()
                    .forEach(
                        t ->
                            t.partitions()
                                .forEach(
                                    p -> p.setLeaderEpoch(RecordBatch.NO_PARTITION_LEADER_EPOCH)));
              }
              return new ListOffsetsResponse(data);
            });
  }

  /**
   * One partition's answer: the log start, the end a consumer of {@code isolation} may read to (the
   * high watermark, or the last stable offset), or the record at a timestamp below that end.
   */
  private CompletableFuture<Void> lookup(
      TopicPartition tp,
      long timestamp,
      IsolationLevel isolation,
      ListOffsetsPartitionResponse response) {
    if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
        || timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
      boolean earliest = timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP;
      return replicas
          .offsets(tp)
          .thenAccept(
              offsets ->
                  response
                      .setErrorCode(Errors.NONE.code())
                      .setOffset(
                          earliest
                              ? offsets.logStartOffset()
                              : offsets.lastFetchableOffset(isolation))
                      .setLeaderEpoch(0));
    }
    if (timestamp < 0 && timestamp != ListOffsetsRequest.MAX_TIMESTAMP) {
      response.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
      return CompletableFuture.completedFuture(null);
    }
    return (timestamp == ListOffsetsRequest.MAX_TIMESTAMP
            ? replicas.maxTimestampRecord(tp, isolation)
            : replicas.offsetForTimestamp(tp, timestamp, isolation))
        .thenAccept(
            found -> {
              response.setErrorCode(Errors.NONE.code());
              found.ifPresent(
                  f ->
                      response
                          .setOffset(f.offset)
                          .setTimestamp(f.timestamp)
                          .setLeaderEpoch(
                              f.leaderEpoch.orElse(RecordBatch.NO_PARTITION_LEADER_EPOCH)));
            });
  }

  CompletableFuture<OffsetsForLeaderEpochResponse> offsetForLeaderEpoch(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    boolean follower = authorization.allowedOnCluster(context, AclOperation.CLUSTER_ACTION);
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    OffsetForLeaderEpochRequestData data = ((OffsetsForLeaderEpochRequest) request).data();
    OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
    List<CompletableFuture<Void>> lookups = new ArrayList<>();
    for (OffsetForLeaderTopic topic : data.topics()) {
      OffsetForLeaderTopicResult topicResult =
          new OffsetForLeaderTopicResult().setTopic(topic.topic());
      response.topics().add(topicResult);
      for (OffsetForLeaderPartition partition : topic.partitions()) {
        EpochEndOffset result = new EpochEndOffset().setPartition(partition.partition());
        topicResult.partitions().add(result);
        TopicPartition tp = new TopicPartition(topic.topic(), partition.partition());
        if (!follower && !describable.test(tp.topic())) {
          result.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
          continue;
        }
        lookups.add(
            replicas
                .endOffsetForEpoch(tp, partition.leaderEpoch(), partition.currentLeaderEpoch())
                .handle(
                    (found, e) -> {
                      if (e != null) {
                        result.setErrorCode(ErrorMapping.errorOf(e, header).code());
                      } else {
                        result
                            .setErrorCode(Errors.NONE.code())
                            .setLeaderEpoch(found.epoch())
                            .setEndOffset(found.endOffset());
                      }
                      return null;
                    }));
      }
    }
    return CompletableFuture.allOf(lookups.toArray(CompletableFuture[]::new))
        .thenApply(v -> new OffsetsForLeaderEpochResponse(response));
  }

  CompletableFuture<DeleteRecordsResponse> deleteRecords(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    Predicate<String> deletable =
        authorization.on(context, AclOperation.DELETE, ResourceType.TOPIC);
    DeleteRecordsRequestData data = ((DeleteRecordsRequest) request).data();
    DeleteRecordsResponseData response = new DeleteRecordsResponseData();
    List<CompletableFuture<Void>> deletions = new ArrayList<>();
    for (DeleteRecordsTopic topic : data.topics()) {
      DeleteRecordsTopicResult topicResult = new DeleteRecordsTopicResult().setName(topic.name());
      response.topics().add(topicResult);
      for (DeleteRecordsPartition partition : topic.partitions()) {
        DeleteRecordsPartitionResult result =
            new DeleteRecordsPartitionResult()
                .setPartitionIndex(partition.partitionIndex())
                .setLowWatermark(-1);
        topicResult.partitions().add(result);
        TopicPartition tp = new TopicPartition(topic.name(), partition.partitionIndex());
        if (!deletable.test(tp.topic())) {
          result.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
          continue;
        }
        deletions.add(
            replicas
                .deleteRecordsBefore(tp, partition.offset())
                .handle(
                    (lowWatermark, e) -> {
                      if (e != null) {
                        result.setErrorCode(ErrorMapping.errorOf(e, header).code());
                      } else {
                        result.setErrorCode(Errors.NONE.code()).setLowWatermark(lowWatermark);
                      }
                      return null;
                    }));
      }
    }
    return CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new))
        .thenApply(v -> new DeleteRecordsResponse(response));
  }
}
