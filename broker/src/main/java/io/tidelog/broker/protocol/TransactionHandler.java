package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.GroupConfig;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.txn.TransactionCoordinator;
import io.tidelog.broker.txn.TransactionCoordinator.TransactionListing;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResultCollection;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * The transaction APIs a producer and the admin tools send to a transactional id's coordinator:
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions, served by
 * the {@link TransactionCoordinator}.
 *
 * <p>Authorized as in Kafka: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
 * AddPartitionsToTxn v0-3 also WRITE on each topic (internal topics never:
 * TOPIC_AUTHORIZATION_FAILED, with unknown partitions UNKNOWN_TOPIC_OR_PARTITION and the others
 * OPERATION_NOT_ATTEMPTED), v4 and up, which only brokers send, CLUSTER_ACTION; AddOffsetsToTxn
 * READ on the group (GROUP_AUTHORIZATION_FAILED). DescribeTransactions and ListTransactions show
 * the ids the client may DESCRIBE, and of their partitions those of topics it may DESCRIBE.
 * Versions before 2 get INVALID_PRODUCER_EPOCH where later ones get PRODUCER_FENCED.
 */
public final class TransactionHandler {
  private final TransactionCoordinator coordinator;
  private final MetadataStore metadata;
  private final GroupConfig groups;
  private final Authorization authorization;
  private final Time time;

  public TransactionHandler(
      TransactionCoordinator coordinator,
      MetadataStore metadata,
      GroupConfig groups,
      Authorization authorization,
      Time time) {
    this.coordinator = coordinator;
    this.metadata = metadata;
    this.groups = groups;
    this.authorization = authorization;
    this.time = time;
  }

  CompletableFuture<AddPartitionsToTxnResponse> addPartitions(
      RequestContext context, AbstractRequest request) {
    short version = context.header.apiVersion();
    AddPartitionsToTxnRequest add =
        version < 4
            ? ((AddPartitionsToTxnRequest) request).normalizeRequest()
            : (AddPartitionsToTxnRequest) request;
    if (version >= 4 && !authorization.allowedOnCluster(context, AclOperation.CLUSTER_ACTION)) {
      return CompletableFuture.completedFuture(
          add.getErrorResponse(0, new ClusterAuthorizationException("CLUSTER_ACTION is needed")));
    }
    Map<String, List<TopicPartition>> byTransaction = add.partitionsByTransaction();
    List<CompletableFuture<AddPartitionsToTxnResult>> results = new ArrayList<>();
    for (AddPartitionsToTxnTransaction txn : add.data().transactions()) {
      String transactionalId = txn.transactionalId();
      if (transactionalId == null) {
        return CompletableFuture.failedFuture(
            new InvalidRequestException("A transactional id is null"));
      }
      results.add(addPartitions(context, add, version, txn, byTransaction.get(transactionalId)));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              AddPartitionsToTxnResponseData data = new AddPartitionsToTxnResponseData();
              if (version < 4) {
                data.setResultsByTopicV3AndBelow(results.get(0).join().topicResults());
              } else {
                AddPartitionsToTxnResultCollection all = new AddPartitionsToTxnResultCollection();
                results.forEach(r -> all.add(r.join()));
                data.setResultsByTransaction(all);
              }
              return new AddPartitionsToTxnResponse(data);
            });
  }

  private CompletableFuture<AddPartitionsToTxnResult> addPartitions(
      RequestContext context,
      AddPartitionsToTxnRequest add,
      short version,
      AddPartitionsToTxnTransaction txn,
      List<TopicPartition> partitions) {
    String transactionalId = txn.transactionalId();
    if (version < 4
        && !authorization.allowed(
            context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
      return CompletableFuture.completedFuture(
          add.errorResponseForTransaction(
              transactionalId, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
    }
    Predicate<String> writable =
        version < 4
            ? authorization.on(context, AclOperation.WRITE, ResourceType.TOPIC)
            : topic -> true;
    Map<TopicPartition, Errors> refused = new LinkedHashMap<>();
    Set<TopicPartition> accepted = new HashSet<>();
    for (TopicPartition tp : partitions) {
      boolean authorized =
          version >= 4 || (!Topic.isInternal(tp.topic()) && writable.test(tp.topic()));
      if (!authorized) {
        refused.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
      } else if (metadata.image().partition(tp).isEmpty()) {
        refused.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
      } else {
        accepted.add(tp);
      }
    }
    if (!refused.isEmpty()) {
      Map<TopicPartition, Errors> errors = new LinkedHashMap<>(refused);
      accepted.forEach(tp -> errors.put(tp, Errors.OPERATION_NOT_ATTEMPTED));
      return CompletableFuture.completedFuture(
          AddPartitionsToTxnResponse.resultForTransaction(transactionalId, errors));
    }
    if (txn.verifyOnly()) {
      return coordinator
          .verifyPartitions(transactionalId, txn.producerId(), txn.producerEpoch(), accepted)
          .thenApply(
              errors -> AddPartitionsToTxnResponse.resultForTransaction(transactionalId, errors));
    }
    return coordinator
        .addPartitions(
            transactionalId,
            txn.producerId(),
            txn.producerEpoch(),
            accepted,
            version > 3 ? TransactionVersion.TV_2 : TransactionVersion.TV_0)
        .thenApply(
            error ->
                add.errorResponseForTransaction(
                    transactionalId, ErrorMapping.fencedAs(error, version, 2)));
  }

  CompletableFuture<AddOffsetsToTxnResponse> addOffsets(
      RequestContext context, AbstractRequest request) {
    AddOffsetsToTxnRequestData data = ((AddOffsetsToTxnRequest) request).data();
    short version = context.header.apiVersion();
    if (!authorization.allowed(
        context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId())) {
      return CompletableFuture.completedFuture(
          addOffsetsResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
    }
    if (!authorization.allowed(context, AclOperation.READ, ResourceType.GROUP, data.groupId())) {
      return CompletableFuture.completedFuture(
          addOffsetsResponse(Errors.GROUP_AUTHORIZATION_FAILED));
    }
    int partitions =
        metadata
            .topic(GroupCoordinator.OFFSETS_TOPIC)
            .map(TopicMetadata::partitions)
            .orElse(groups.offsetsTopicPartitions());
    TopicPartition offsets =
        new TopicPartition(
            GroupCoordinator.OFFSETS_TOPIC,
            GroupCoordinator.partitionFor(data.groupId(), partitions));
    return coordinator
        .addPartitions(
            data.transactionalId(),
            data.producerId(),
            data.producerEpoch(),
            Set.of(offsets),
            TransactionVersion.TV_0)
        .thenApply(error -> addOffsetsResponse(ErrorMapping.fencedAs(error, version, 2)));
  }

  private static AddOffsetsToTxnResponse addOffsetsResponse(Errors error) {
    return new AddOffsetsToTxnResponse(
        new AddOffsetsToTxnResponseData().setErrorCode(error.code()));
  }

  CompletableFuture<EndTxnResponse> endTxn(RequestContext context, AbstractRequest request) {
    EndTxnRequestData data = ((EndTxnRequest) request).data();
    short version = context.header.apiVersion();
    if (!authorization.allowed(
        context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, data.transactionalId())) {
      return CompletableFuture.completedFuture(
          endTxnResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
    }
    return coordinator
        .endTransaction(
            data.transactionalId(),
            data.producerId(),
            data.producerEpoch(),
            data.committed(),
            version > 4 ? TransactionVersion.TV_2 : TransactionVersion.TV_0)
        .thenApply(
            answer ->
                new EndTxnResponse(
                    new EndTxnResponseData()
                        .setErrorCode(ErrorMapping.fencedAs(answer.error(), version, 2).code())
                        .setProducerId(answer.producerId())
                        .setProducerEpoch(answer.producerEpoch())));
  }

  private static EndTxnResponse endTxnResponse(Errors error) {
    return new EndTxnResponse(new EndTxnResponseData().setErrorCode(error.code()));
  }

  CompletableFuture<DescribeTransactionsResponse> describe(
      RequestContext context, AbstractRequest request) {
    List<String> ids = ((DescribeTransactionsRequest) request).data().transactionalIds();
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    List<CompletableFuture<DescribeTransactionsResponseData.TransactionState>> states =
        new ArrayList<>();
    for (String id : ids) {
      states.add(describe(context, id, describable));
    }
    return CompletableFuture.allOf(states.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              DescribeTransactionsResponseData data = new DescribeTransactionsResponseData();
              states.forEach(s -> data.transactionStates().add(s.join()));
              return new DescribeTransactionsResponse(data);
            });
  }

  private CompletableFuture<DescribeTransactionsResponseData.TransactionState> describe(
      RequestContext context, String id, Predicate<String> describableTopic) {
    DescribeTransactionsResponseData.TransactionState state =
        new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id);
    if (!authorization.allowed(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, id)) {
      return CompletableFuture.completedFuture(
          state.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()));
    }
    if (id.isEmpty()) {
      return CompletableFuture.completedFuture(state.setErrorCode(Errors.INVALID_REQUEST.code()));
    }
    return coordinator
        .describe(id)
        .handle(
            (listing, e) -> {
              if (e != null) {
                return state.setErrorCode(ErrorMapping.errorOf(e, context.header).code());
              }
              if (listing == null) {
                return state.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
              }
              Map<String, DescribeTransactionsResponseData.TopicData> topics = new HashMap<>();
              for (TopicPartition tp : listing.partitions()) {
                if (describableTopic.test(tp.topic())) {
                  topics
                      .computeIfAbsent(
                          tp.topic(),
                          t -> new DescribeTransactionsResponseData.TopicData().setTopic(t))
                      .partitions()
                      .add(tp.partition());
                }
              }
              topics.values().forEach(t -> state.topics().add(t));
              return state
                  .setErrorCode(Errors.NONE.code())
                  .setProducerId(listing.producerId())
                  .setProducerEpoch(listing.producerEpoch())
                  .setTransactionState(listing.state().stateName())
                  .setTransactionTimeoutMs(listing.timeoutMs())
                  .setTransactionStartTimeMs(listing.startTimestampMs());
            });
  }

  CompletableFuture<ListTransactionsResponse> list(
      RequestContext context, AbstractRequest request) {
    ListTransactionsRequestData data = ((ListTransactionsRequest) request).data();
    ListTransactionsResponseData response = new ListTransactionsResponseData();
    Set<String> states = new HashSet<>();
    for (String name : data.stateFilters()) {
      if (TransactionState.fromName(name).isPresent()) {
        states.add(name);
      } else {
        response.unknownStateFilters().add(name);
      }
    }
    Set<Long> producerIds = new HashSet<>(data.producerIdFilters());
    Pattern pattern;
    try {
      String regex = data.transactionalIdPattern();
      pattern = regex == null || regex.isEmpty() ? null : Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      return CompletableFuture.completedFuture(
          new ListTransactionsResponse(
              response.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code())));
    }
    long nowMs = time.milliseconds();
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID);
    return coordinator
        .list()
        .handle(
            (listings, e) -> {
              if (e != null) {
                return new ListTransactionsResponse(
                    response.setErrorCode(ErrorMapping.errorOf(e, context.header).code()));
              }
              for (TransactionListing txn : listings) {
                boolean wanted =
                    (producerIds.isEmpty() || producerIds.contains(txn.producerId()))
                        && (states.isEmpty() || states.contains(txn.state().stateName()))
                        && (data.durationFilter() < 0
                            || nowMs - txn.startTimestampMs() > data.durationFilter())
                        && (pattern == null || pattern.matcher(txn.transactionalId()).matches())
                        && describable.test(txn.transactionalId());
                if (wanted) {
                  response
                      .transactionStates()
                      .add(
                          new ListTransactionsResponseData.TransactionState()
                              .setTransactionalId(txn.transactionalId())
                              .setProducerId(txn.producerId())
                              .setTransactionState(txn.state().stateName()));
                }
              }
              return new ListTransactionsResponse(response.setErrorCode(Errors.NONE.code()));
            });
  }
}
