package io.tidelog.broker.protocol;

import io.tidelog.broker.replica.FutureReplicaStatus;
import io.tidelog.broker.replica.LogDirStatus;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.replica.ReplicaStatus;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterReplicaLogDirsRequest;
import org.apache.kafka.common.requests.AlterReplicaLogDirsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * DescribeLogDirs, as {@code kafka-log-dirs} and Admin's {@code describeLogDirs} ask it: each log
 * directory of this broker with its file system's size and free space, and the replicas it holds
 * (of every partition, or of those asked) with their size on disk and how far their log end is
 * below the high watermark ({@code offsetLag}, 0 for a leader). An offline directory is answered
 * KAFKA_STORAGE_ERROR. Authorized as in Kafka: DESCRIBE on the cluster, else the request's error is
 * CLUSTER_AUTHORIZATION_FAILED with no directory. A replica moving to another directory is listed
 * there too, as a future replica whose lag is how far its log end is below the current log's.
 */
public final class LogDirsHandler {
  private final ReplicaManager replicas;
  private final Authorization authorization;

  public LogDirsHandler(ReplicaManager replicas, Authorization authorization) {
    this.replicas = replicas;
    this.authorization = authorization;
  }

  CompletableFuture<DescribeLogDirsResponse> describe(
      RequestContext context, AbstractRequest request) {
    DescribeLogDirsRequestData data = ((DescribeLogDirsRequest) request).data();
    if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE)) {
      return CompletableFuture.completedFuture(
          new DescribeLogDirsResponse(
              new DescribeLogDirsResponseData()
                  .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())));
    }
    Set<TopicPartition> asked = asked(data);
    CompletableFuture<List<FutureReplicaStatus>> futures = replicas.futureReplicaStatuses();
    return replicas
        .logDirStatuses()
        .thenCombine(replicas.replicaStatuses(), (dirs, statuses) -> Map.entry(dirs, statuses))
        .thenCombine(
            futures,
            (current, future) -> response(current.getKey(), current.getValue(), future, asked));
  }

  /**
   * AlterReplicaLogDirs, as {@code kafka-reassign-partitions} sends it for a plan's {@code
   * log_dirs}: moves each replica named to the directory named, answering per partition as Kafka
   * does (LOG_DIR_NOT_FOUND for a directory not in {@code log.dirs}, KAFKA_STORAGE_ERROR for an
   * offline one, REPLICA_NOT_AVAILABLE for a partition this broker has no replica of yet, whose log
   * goes there once it has). Authorized as in Kafka: ALTER on the cluster, else every partition is
   * answered CLUSTER_AUTHORIZATION_FAILED.
   */
  CompletableFuture<AlterReplicaLogDirsResponse> alter(
      RequestContext context, AbstractRequest request) {
    AlterReplicaLogDirsRequestData data = ((AlterReplicaLogDirsRequest) request).data();
    Map<TopicPartition, String> wanted = new LinkedHashMap<>();
    for (AlterReplicaLogDir dir : data.dirs()) {
      for (AlterReplicaLogDirTopic topic : dir.topics()) {
        for (int partition : topic.partitions()) {
          wanted.put(new TopicPartition(topic.name(), partition), dir.path());
        }
      }
    }
    Map<TopicPartition, CompletableFuture<Errors>> results = new LinkedHashMap<>();
    boolean allowed = authorization.allowedOnCluster(context, AclOperation.ALTER);
    wanted.forEach(
        (tp, dir) ->
            results.put(
                tp,
                allowed
                    ? replicas
                        .alterLogDir(tp, dir)
                        .handle((done, e) -> e == null ? Errors.NONE : Errors.forException(e))
                    : CompletableFuture.completedFuture(Errors.CLUSTER_AUTHORIZATION_FAILED)));
    return CompletableFuture.allOf(results.values().toArray(CompletableFuture[]::new))
        .thenApply(
            done -> {
              Map<String, AlterReplicaLogDirTopicResult> topics = new LinkedHashMap<>();
              results.forEach(
                  (tp, error) ->
                      topics
                          .computeIfAbsent(
                              tp.topic(),
                              name -> new AlterReplicaLogDirTopicResult().setTopicName(name))
                          .partitions()
                          .add(
                              new AlterReplicaLogDirPartitionResult()
                                  .setPartitionIndex(tp.partition())
                                  .setErrorCode(error.join().code())));
              return new AlterReplicaLogDirsResponse(
                  new AlterReplicaLogDirsResponseData()
                      .setResults(new ArrayList<>(topics.values())));
            });
  }

  /** The partitions asked for, or null for all of them. */
  private static Set<TopicPartition> asked(DescribeLogDirsRequestData data) {
    if (data.topics() == null) {
      return null;
    }
    Set<TopicPartition> asked = new HashSet<>();
    data.topics()
        .forEach(t -> t.partitions().forEach(p -> asked.add(new TopicPartition(t.topic(), p))));
    return asked;
  }

  private static DescribeLogDirsResponse response(
      List<LogDirStatus> dirs,
      List<ReplicaStatus> statuses,
      List<FutureReplicaStatus> futures,
      Set<TopicPartition> asked) {
    DescribeLogDirsResponseData data = new DescribeLogDirsResponseData();
    for (LogDirStatus dir : dirs) {
      DescribeLogDirsResult result = new DescribeLogDirsResult().setLogDir(dir.dir());
      if (dir.offline()) {
        data.results().add(result.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code()));
        continue;
      }
      Map<String, DescribeLogDirsTopic> topics = new LinkedHashMap<>();
      for (ReplicaStatus replica : statuses) {
        if (replica.logDir().equals(dir.dir())) {
          long lag = Math.max(replica.highWatermark() - replica.logEndOffset(), 0);
          add(topics, asked, replica.tp(), replica.sizeBytes(), lag, false);
        }
      }
      for (FutureReplicaStatus future : futures) {
        if (future.logDir().equals(dir.dir())) {
          add(topics, asked, future.tp(), future.sizeBytes(), future.offsetLag(), true);
        }
      }
      data.results()
          .add(
              result
                  .setErrorCode(Errors.NONE.code())
                  .setTopics(List.copyOf(topics.values()))
                  .setTotalBytes(dir.totalBytes())
                  .setUsableBytes(dir.usableBytes()));
    }
    return new DescribeLogDirsResponse(data);
  }

  /** Lists a replica of {@code tp} in {@code topics}, if it is of the partitions asked. */
  private static void add(
      Map<String, DescribeLogDirsTopic> topics,
      Set<TopicPartition> asked,
      TopicPartition tp,
      long sizeBytes,
      long offsetLag,
      boolean future) {
    if (asked != null && !asked.contains(tp)) {
      return;
    }
    topics
        .computeIfAbsent(tp.topic(), name -> new DescribeLogDirsTopic().setName(name))
        .partitions()
        .add(
            new DescribeLogDirsPartition()
                .setPartitionIndex(tp.partition())
                .setPartitionSize(sizeBytes)
                .setOffsetLag(offsetLag)
                .setIsFutureKey(future));
  }
}
