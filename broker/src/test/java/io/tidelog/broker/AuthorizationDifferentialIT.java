package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One table of (ACLs of User:alice, a request alice sends over SASL PLAIN, the answer) run against
 * Apache Kafka 4.1 with its StandardAuthorizer and against Tidelog in the same test: both must give
 * the table's answer, for every API Tidelog serves. Admin work (topics, ACLs) goes through a
 * PLAINTEXT listener whose User:ANONYMOUS is a super user on both.
 */
class AuthorizationDifferentialIT {
  private static final String JAAS =
      "org.apache.kafka.common.security.plain.PlainLoginModule required"
          + " user_alice=\"alice-secret\";";
  private static final String ALICE = "User:alice";
  private static final String TOPIC = "t";
  private static final String GROUP = "g";
  private static final String TX = "tx";
  private static final long UNKNOWN_PRODUCER_ID = 4242L;

  @TempDir static Path kafkaDir;
  @TempDir static Path tidelogDir;
  static Target kafka;
  static Target tidelog;
  static ApacheKafka kafkaProcess;
  static TestBroker tidelogBroker;

  /** One system under test: where alice connects, its admin, its broker id. */
  record Target(String name, int saslPort, Admin admin, int brokerId) {}

  /** What one request answers, as text: error names and the few values the table compares. */
  @FunctionalInterface
  interface Probe {
    String run(RawKafkaClient alice, Target target) throws Exception;
  }

  record Case(String name, List<AclBinding> acls, Probe probe, String expected) {}

  private static Map<String, String> security() {
    Map<String, String> config = new HashMap<>();
    config.put("sasl.enabled.mechanisms", "PLAIN");
    config.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS);
    config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    config.put("super.users", "User:ANONYMOUS");
    return config;
  }

  @BeforeAll
  static void start() throws Exception {
    int kafkaSasl = EtcdServer.freePort();
    kafkaProcess =
        ApacheKafka.start(
            kafkaDir,
            port -> {
              Map<String, String> config = security();
              config.put(
                  "listeners",
                  "PLAINTEXT://127.0.0.1:"
                      + port
                      + ",CONTROLLER://127.0.0.1:"
                      + (port + 100)
                      + ",SASL_PLAINTEXT://127.0.0.1:"
                      + kafkaSasl);
              config.put(
                  "advertised.listeners",
                  "PLAINTEXT://127.0.0.1:" + port + ",SASL_PLAINTEXT://127.0.0.1:" + kafkaSasl);
              config.put(
                  "listener.security.protocol.map",
                  "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT");
              return config;
            });
    int tidelogPlain = EtcdServer.freePort();
    int tidelogSasl = EtcdServer.freePort();
    Map<String, String> config = security();
    config.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + tidelogPlain + ",SASL_PLAINTEXT://127.0.0.1:" + tidelogSasl);
    tidelogBroker = TestBroker.start(tidelogDir, config);
    kafka = new Target("Kafka", kafkaSasl, admin(kafkaProcess.port), 1);
    tidelog = new Target("Tidelog", tidelogSasl, admin(tidelogPlain), 0);
    for (Target target : List.of(kafka, tidelog)) {
      target.admin().createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      // __consumer_offsets exists (the admin's FindCoordinator creates it), as the transactional
      // offset commits need it
      target.admin().listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get();
    }
  }

  private static Admin admin(int port) {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            "127.0.0.1:" + port,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            "60000"));
  }

  @AfterAll
  static void stop() throws Exception {
    try (ApacheKafka k = kafkaProcess;
        TestBroker t = tidelogBroker) {
      kafka.admin().close();
      tidelog.admin().close();
    }
  }

  private static AclBinding allow(ResourceType type, String name, AclOperation operation) {
    return acl(type, name, PatternType.LITERAL, operation, AclPermissionType.ALLOW, "*");
  }

  private static AclBinding acl(
      ResourceType type,
      String name,
      PatternType pattern,
      AclOperation operation,
      AclPermissionType permission,
      String host) {
    return new AclBinding(
        new ResourcePattern(type, name, pattern),
        new AccessControlEntry(ALICE, host, operation, permission));
  }

  private static List<Case> cases() {
    AclBinding describeTopic = allow(ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE);
    AclBinding readTopic = allow(ResourceType.TOPIC, TOPIC, AclOperation.READ);
    AclBinding readGroup = allow(ResourceType.GROUP, GROUP, AclOperation.READ);
    AclBinding describeAllTopics = allow(ResourceType.TOPIC, "*", AclOperation.DESCRIBE);
    List<Case> cases = new ArrayList<>();
    cases.add(
        new Case(
            "metadata, no ACL", List.of(), metadata(TOPIC, false), "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "metadata of a missing topic, no ACL",
            List.of(),
            metadata("missing", false),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "metadata, DESCRIBE",
            List.of(describeTopic),
            metadata(TOPIC, false),
            "NONE ops=" + ops(AclOperation.DESCRIBE)));
    cases.add(
        new Case(
            "metadata, READ implies DESCRIBE",
            List.of(readTopic),
            metadata(TOPIC, false),
            "NONE ops=" + ops(AclOperation.READ, AclOperation.DESCRIBE)));
    cases.add(
        new Case(
            "metadata, prefixed DESCRIBE",
            List.of(
                acl(
                    ResourceType.TOPIC,
                    "t",
                    PatternType.PREFIXED,
                    AclOperation.DESCRIBE,
                    AclPermissionType.ALLOW,
                    "*")),
            metadata(TOPIC, false),
            "NONE ops=" + ops(AclOperation.DESCRIBE)));
    cases.add(
        new Case(
            "metadata, DESCRIBE from another host",
            List.of(
                acl(
                    ResourceType.TOPIC,
                    TOPIC,
                    PatternType.LITERAL,
                    AclOperation.DESCRIBE,
                    AclPermissionType.ALLOW,
                    "10.9.9.9")),
            metadata(TOPIC, false),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "metadata, DENY beats ALLOW",
            List.of(
                describeTopic,
                acl(
                    ResourceType.TOPIC,
                    TOPIC,
                    PatternType.LITERAL,
                    AclOperation.DESCRIBE,
                    AclPermissionType.DENY,
                    "*")),
            metadata(TOPIC, false),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "metadata auto-creation without CREATE",
            List.of(describeAllTopics),
            metadata("auto-created", true),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(new Case("metadata of all topics, no ACL", List.of(), allTopics(), "topics=0"));
    cases.add(
        new Case(
            "metadata of all topics, DESCRIBE", List.of(describeTopic), allTopics(), "topics=1"));
    cases.add(
        new Case(
            "produce, no ACL", List.of(describeTopic), produce(), "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "produce, WRITE",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE)),
            produce(),
            "NONE"));
    cases.add(
        new Case(
            "transactional produce, WRITE on the topic only",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE)),
            transactionalProduce(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            // authorized, and no coordinator can verify the transaction (KIP-890)
            "transactional produce, WRITE on the topic and the transactional id",
            List.of(
                allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE),
                allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)),
            transactionalProduce(),
            "NOT_ENOUGH_REPLICAS"));
    cases.add(
        new Case("fetch, no ACL", List.of(describeTopic), fetch(), "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(new Case("fetch, READ", List.of(readTopic), fetch(), "NONE"));
    cases.add(
        new Case(
            "describe producers, DESCRIBE only",
            List.of(describeTopic),
            describeProducers(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case("describe producers, READ", List.of(readTopic), describeProducers(), "NONE"));
    cases.add(
        new Case(
            "write transaction markers, WRITE on the topic",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE)),
            writeTxnMarkers(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "write transaction markers, CLUSTER_ACTION",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.CLUSTER_ACTION)),
            writeTxnMarkers(),
            "NONE"));
    cases.add(
        new Case(
            "fetch, READ denied",
            List.of(
                readTopic,
                acl(
                    ResourceType.TOPIC,
                    "*",
                    PatternType.LITERAL,
                    AclOperation.READ,
                    AclPermissionType.DENY,
                    "*")),
            fetch(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case("list offsets, no ACL", List.of(), listOffsets(), "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(new Case("list offsets, READ", List.of(readTopic), listOffsets(), "NONE"));
    cases.add(
        new Case(
            "offset for leader epoch, no ACL",
            List.of(),
            offsetForLeaderEpoch(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "delete records, no ACL",
            List.of(describeTopic),
            deleteRecords(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "create topics, no ACL",
            List.of(),
            createTopic("created-1"),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "create topics, CREATE on the cluster",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.CREATE)),
            createTopic("created-2"),
            "NONE"));
    cases.add(
        new Case(
            "create topics, CREATE on the topic",
            List.of(allow(ResourceType.TOPIC, "created-3", AclOperation.CREATE)),
            createTopic("created-3"),
            "NONE"));
    cases.add(
        new Case(
            "create partitions, no ALTER",
            List.of(describeTopic),
            createPartitions(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "delete topics, no ACL", List.of(), deleteTopic(TOPIC), "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "delete topics, DESCRIBE only",
            List.of(describeTopic),
            deleteTopic(TOPIC),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "delete a missing topic, DESCRIBE",
            List.of(describeAllTopics),
            deleteTopic("missing"),
            "UNKNOWN_TOPIC_OR_PARTITION"));
    cases.add(
        new Case(
            "delete a missing topic, no ACL",
            List.of(),
            deleteTopic("missing"),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe topic configs, no ACL",
            List.of(describeTopic),
            describeConfigs(ConfigResource.Type.TOPIC),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe topic configs, DESCRIBE_CONFIGS",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE_CONFIGS)),
            describeConfigs(ConfigResource.Type.TOPIC),
            "NONE"));
    cases.add(
        new Case(
            "describe broker configs, no ACL",
            List.of(),
            describeConfigs(ConfigResource.Type.BROKER),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter topic configs, DESCRIBE_CONFIGS only",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE_CONFIGS)),
            alterConfigs(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter topic configs, ALTER_CONFIGS",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.ALTER_CONFIGS)),
            alterConfigs(),
            "NONE"));
    cases.add(
        new Case(
            "find coordinator, no ACL",
            List.of(),
            findCoordinator(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(new Case("join group, no ACL", List.of(), joinGroup(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "commit offsets, READ group only",
            List.of(readGroup),
            commit(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "commit offsets, no ACL", List.of(readTopic), commit(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "fetch offsets, no ACL",
            List.of(readTopic),
            fetchOffsets(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe groups, no ACL", List.of(), describeGroup(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "delete groups, READ only",
            List.of(readGroup),
            deleteGroup(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "idempotent producer id, no ACL",
            List.of(describeTopic),
            initProducerId(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "idempotent producer id, WRITE on a topic",
            List.of(allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE)),
            initProducerId(),
            "NONE"));
    cases.add(
        new Case(
            "idempotent producer id, IDEMPOTENT_WRITE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE)),
            initProducerId(),
            "NONE"));
    AclBinding writeTx = allow(ResourceType.TRANSACTIONAL_ID, TX, AclOperation.WRITE);
    AclBinding writeTopic = allow(ResourceType.TOPIC, TOPIC, AclOperation.WRITE);
    cases.add(
        new Case(
            "find transaction coordinator, no ACL",
            List.of(),
            findTransactionCoordinator(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "find transaction coordinator, DESCRIBE",
            List.of(allow(ResourceType.TRANSACTIONAL_ID, TX, AclOperation.DESCRIBE)),
            findTransactionCoordinator(),
            "NONE"));
    cases.add(
        new Case(
            "transactional producer id, WRITE on the topic only",
            List.of(writeTopic),
            transactionalInitProducerId(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "transactional producer id, WRITE",
            List.of(writeTx),
            transactionalInitProducerId(),
            "NONE"));
    cases.add(
        new Case(
            "add partitions to a transaction, no ACL",
            List.of(writeTopic),
            addPartitionsToTxn(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "add partitions to a transaction, WRITE on the transactional id only",
            List.of(writeTx),
            addPartitionsToTxn(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "add partitions to a transaction, WRITE",
            List.of(writeTx, writeTopic),
            addPartitionsToTxn(),
            "INVALID_PRODUCER_ID_MAPPING"));
    cases.add(
        new Case(
            "verify partitions of a transaction (v4), no CLUSTER_ACTION",
            List.of(writeTx, writeTopic),
            verifyPartitionsOfTxn(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "add offsets to a transaction, no ACL",
            List.of(readGroup),
            addOffsetsToTxn(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "add offsets to a transaction, WRITE on the transactional id only",
            List.of(writeTx),
            addOffsetsToTxn(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "add offsets to a transaction, WRITE and READ on the group",
            List.of(writeTx, readGroup),
            addOffsetsToTxn(),
            "INVALID_PRODUCER_ID_MAPPING"));
    cases.add(
        new Case(
            "end a transaction, no ACL",
            List.of(),
            endTxn(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "end a transaction, WRITE", List.of(writeTx), endTxn(), "INVALID_PRODUCER_ID_MAPPING"));
    cases.add(
        new Case(
            "transactional offset commit, READ on group and topic only",
            List.of(readGroup, readTopic),
            txnOffsetCommit(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "transactional offset commit, WRITE on the transactional id only",
            List.of(writeTx, readTopic),
            txnOffsetCommit(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "transactional offset commit, no READ on the topic",
            List.of(writeTx, readGroup),
            txnOffsetCommit(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "transactional offset commit, WRITE and READ",
            List.of(writeTx, readGroup, readTopic),
            txnOffsetCommit(),
            "INVALID_PRODUCER_ID_MAPPING"));
    cases.add(
        new Case(
            "describe transactions, no ACL",
            List.of(),
            describeTransactions(),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe transactions, DESCRIBE",
            List.of(allow(ResourceType.TRANSACTIONAL_ID, TX, AclOperation.DESCRIBE)),
            describeTransactions(),
            "NONE"));
    cases.add(new Case("list transactions, no ACL", List.of(), listTransactions(), "NONE ids=[]"));
    cases.add(
        new Case(
            "list transactions, DESCRIBE",
            List.of(allow(ResourceType.TRANSACTIONAL_ID, TX, AclOperation.DESCRIBE)),
            listTransactions(),
            "NONE ids=[" + TX + "]"));
    cases.add(
        new Case(
            "create ACLs, no ACL",
            List.of(),
            createAcl(allow(ResourceType.TOPIC, "x", AclOperation.READ)),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "create ACLs, ALTER on the cluster",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            createAcl(allow(ResourceType.TOPIC, "x", AclOperation.READ)),
            "NONE"));
    cases.add(
        new Case(
            "create an ACL on a misnamed cluster",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            createAcl(allow(ResourceType.CLUSTER, "other", AclOperation.ALTER)),
            "INVALID_REQUEST"));
    cases.add(
        new Case(
            "create an ACL with no resource name",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            createAcl(allow(ResourceType.TOPIC, "", AclOperation.READ)),
            "INVALID_REQUEST"));
    cases.add(
        new Case(
            "create an ACL without a principal type",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            createAcl(
                new AclBinding(
                    new ResourcePattern(ResourceType.TOPIC, "x", PatternType.LITERAL),
                    new AccessControlEntry(
                        "alice", "*", AclOperation.READ, AclPermissionType.ALLOW))),
            "INVALID_REQUEST"));
    cases.add(
        new Case(
            "describe ACLs, no ACL", List.of(), describeAcls(), "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe ACLs, DESCRIBE on the cluster",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            describeAcls(),
            "NONE acls=1"));
    cases.add(
        new Case(
            "describe SCRAM users, no ACL",
            List.of(),
            describeScram(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter SCRAM users, no ACL",
            List.of(),
            alterScram(4096),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter SCRAM users, too few iterations",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            alterScram(100),
            "UNACCEPTABLE_CREDENTIAL"));
    cases.add(new Case("describe cluster, no ACL", List.of(), describeCluster(), "NONE ops=0"));
    cases.add(
        new Case(
            "describe cluster, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            describeCluster(),
            "NONE ops=" + ops(AclOperation.DESCRIBE)));
    cases.add(
        new Case(
            "describe log dirs, no ACL",
            List.of(),
            describeLogDirs(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe log dirs, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            describeLogDirs(),
            "NONE dirs=1"));
    cases.add(
        new Case(
            "alter replica log dirs, no ACL",
            List.of(),
            alterReplicaLogDirs(),
            "[CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "alter replica log dirs, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            alterReplicaLogDirs(),
            "[CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "alter replica log dirs, ALTER",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            alterReplicaLogDirs(),
            "[LOG_DIR_NOT_FOUND]"));
    cases.add(
        new Case(
            "elect leaders, no ACL",
            List.of(),
            electLeaders(),
            "CLUSTER_AUTHORIZATION_FAILED [CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "elect leaders, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            electLeaders(),
            "CLUSTER_AUTHORIZATION_FAILED [CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "elect leaders, ALTER",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            electLeaders(),
            "NONE [ELECTION_NOT_NEEDED]"));
    cases.add(
        new Case(
            "alter partition reassignments, no ACL",
            List.of(),
            cancelReassignment(),
            "CLUSTER_AUTHORIZATION_FAILED [CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "alter partition reassignments, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            cancelReassignment(),
            "CLUSTER_AUTHORIZATION_FAILED [CLUSTER_AUTHORIZATION_FAILED]"));
    cases.add(
        new Case(
            "alter partition reassignments, ALTER",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)),
            cancelReassignment(),
            "NONE [NO_REASSIGNMENT_IN_PROGRESS]"));
    cases.add(
        new Case(
            "list partition reassignments, no ACL",
            List.of(),
            listReassignments(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "list partition reassignments, DESCRIBE",
            List.of(allow(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE)),
            listReassignments(),
            "NONE topics=0"));
    cases.add(new Case("api versions, no ACL", List.of(), apiVersions(), "NONE"));
    cases.add(new Case("sync group, no ACL", List.of(), syncGroup(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(new Case("heartbeat, no ACL", List.of(), heartbeat(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case("leave group, no ACL", List.of(), leaveGroup(), "GROUP_AUTHORIZATION_FAILED"));
    cases.add(new Case("list groups, no ACL", List.of(), listGroups(), "NONE groups=0"));
    cases.add(
        new Case(
            "delete offsets, no ACL",
            List.of(readTopic),
            offsetDelete(),
            "GROUP_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter configs (legacy), no ACL",
            List.of(describeTopic),
            legacyAlterConfigs(),
            "TOPIC_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "describe client quotas, no ACL",
            List.of(),
            describeQuotas(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case(
            "alter client quotas, no ACL",
            List.of(),
            alterQuotas(),
            "CLUSTER_AUTHORIZATION_FAILED"));
    cases.add(
        new Case("delete ACLs, no ACL", List.of(), deleteAcls(), "CLUSTER_AUTHORIZATION_FAILED"));
    return cases;
  }

  private static Probe apiVersions() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.ApiVersionsResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.ApiVersionsRequest.Builder()
                                .build((short) 3)))
                    .data()
                    .errorCode())
            .name();
  }

  private static Probe syncGroup() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.SyncGroupResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.SyncGroupRequest.Builder(
                                    new org.apache.kafka.common.message.SyncGroupRequestData()
                                        .setGroupId(GROUP)
                                        .setGenerationId(1)
                                        .setMemberId("m")
                                        .setProtocolType("consumer")
                                        .setProtocolName("range"))
                                .build((short) 5)))
                    .data()
                    .errorCode())
            .name();
  }

  private static Probe heartbeat() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.HeartbeatResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.HeartbeatRequest.Builder(
                                    new org.apache.kafka.common.message.HeartbeatRequestData()
                                        .setGroupId(GROUP)
                                        .setGenerationId(1)
                                        .setMemberId("m"))
                                .build((short) 4)))
                    .data()
                    .errorCode())
            .name();
  }

  private static Probe leaveGroup() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.LeaveGroupResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.LeaveGroupRequest.Builder(
                                    GROUP,
                                    List.of(
                                        new org.apache.kafka.common.message.LeaveGroupRequestData
                                                .MemberIdentity()
                                            .setMemberId("m")))
                                .build((short) 5)))
                    .data()
                    .errorCode())
            .name();
  }

  private static Probe listGroups() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.ListGroupsResponse)
              alice.send(
                  new org.apache.kafka.common.requests.ListGroupsRequest.Builder(
                          new org.apache.kafka.common.message.ListGroupsRequestData())
                      .build((short) 4));
      return Errors.forCode(response.data().errorCode()).name()
          + " groups="
          + response.data().groups().size();
    };
  }

  private static Probe offsetDelete() {
    return (alice, target) -> {
      var topics =
          new org.apache.kafka.common.message.OffsetDeleteRequestData
              .OffsetDeleteRequestTopicCollection();
      topics.add(
          new org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestTopic()
              .setName(TOPIC)
              .setPartitions(
                  List.of(
                      new org.apache.kafka.common.message.OffsetDeleteRequestData
                              .OffsetDeleteRequestPartition()
                          .setPartitionIndex(0))));
      return Errors.forCode(
              ((org.apache.kafka.common.requests.OffsetDeleteResponse)
                      alice.send(
                          new org.apache.kafka.common.requests.OffsetDeleteRequest.Builder(
                                  new org.apache.kafka.common.message.OffsetDeleteRequestData()
                                      .setGroupId(GROUP)
                                      .setTopics(topics))
                              .build((short) 0)))
                  .data()
                  .errorCode())
          .name();
    };
  }

  private static Probe legacyAlterConfigs() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.AlterConfigsResponse)
              alice.send(
                  new org.apache.kafka.common.requests.AlterConfigsRequest.Builder(
                          Map.of(
                              new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
                              new org.apache.kafka.common.requests.AlterConfigsRequest.Config(
                                  List.of(
                                      new org.apache.kafka.common.requests.AlterConfigsRequest
                                          .ConfigEntry("retention.ms", "86400000")))),
                          true)
                      .build((short) 2));
      return Errors.forCode(response.data().responses().get(0).errorCode()).name();
    };
  }

  private static Probe describeQuotas() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.DescribeClientQuotasResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.DescribeClientQuotasRequest
                                    .Builder(org.apache.kafka.common.quota.ClientQuotaFilter.all())
                                .build((short) 1)))
                    .data()
                    .errorCode())
            .name();
  }

  private static Probe alterQuotas() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.AlterClientQuotasResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.AlterClientQuotasRequest.Builder(
                                    List.of(
                                        new org.apache.kafka.common.quota.ClientQuotaAlteration(
                                            new org.apache.kafka.common.quota.ClientQuotaEntity(
                                                Map.of("user", "alice")),
                                            List.of(
                                                new org.apache.kafka.common.quota
                                                    .ClientQuotaAlteration.Op(
                                                    "producer_byte_rate", 1e6)))),
                                    false)
                                .build((short) 1)))
                    .data()
                    .entries()
                    .get(0)
                    .errorCode())
            .name();
  }

  private static Probe deleteAcls() {
    return (alice, target) ->
        Errors.forCode(
                ((org.apache.kafka.common.requests.DeleteAclsResponse)
                        alice.send(
                            new org.apache.kafka.common.requests.DeleteAclsRequest.Builder(
                                    new org.apache.kafka.common.message.DeleteAclsRequestData()
                                        .setFilters(
                                            List.of(
                                                org.apache.kafka.common.requests.DeleteAclsRequest
                                                    .deleteAclsFilter(AclBindingFilter.ANY))))
                                .build((short) 3)))
                    .filterResults()
                    .get(0)
                    .errorCode())
            .name();
  }

  private static int ops(AclOperation... allowed) {
    int field = 0;
    for (AclOperation op : allowed) {
      field |= 1 << op.code();
    }
    return field;
  }

  @Test
  void kafkaAndTidelogAuthorizeEveryApiAlike() throws Exception {
    Map<String, String> kafkaAnswers = new LinkedHashMap<>();
    Map<String, String> tidelogAnswers = new LinkedHashMap<>();
    Map<String, String> expected = new LinkedHashMap<>();
    for (Case c : cases()) {
      expected.put(c.name(), c.expected());
      kafkaAnswers.put(c.name(), run(kafka, c));
      tidelogAnswers.put(c.name(), run(tidelog, c));
    }
    assertThat(kafkaAnswers).as("Apache Kafka's answers").isEqualTo(expected);
    assertThat(tidelogAnswers).as("Tidelog's answers").isEqualTo(expected);
  }

  private static String run(Target target, Case c) throws Exception {
    setAcls(target, c.acls());
    try (RawKafkaClient alice = RawKafkaClient.plain(target.saslPort(), "alice", "alice-secret")) {
      return c.probe().run(alice, target);
    }
  }

  /** Makes alice's ACLs exactly {@code acls}, and waits until the broker applies them. */
  private static void setAcls(Target target, List<AclBinding> acls) throws Exception {
    AclBindingFilter alices =
        new AclBindingFilter(
            org.apache.kafka.common.resource.ResourcePatternFilter.ANY,
            new AccessControlEntryFilter(ALICE, null, AclOperation.ANY, AclPermissionType.ANY));
    target.admin().deleteAcls(List.of(alices)).all().get();
    if (!acls.isEmpty()) {
      target.admin().createAcls(acls).all().get();
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> target.admin().describeAcls(alices).values().get().size() == acls.size());
  }

  private static Probe metadata(String topic, boolean autoCreate) {
    return (alice, target) -> {
      MetadataResponse response =
          (MetadataResponse)
              alice.send(
                  new MetadataRequest(
                      new MetadataRequestData()
                          .setTopics(
                              List.of(
                                  new MetadataRequestData.MetadataRequestTopic().setName(topic)))
                          .setAllowAutoTopicCreation(autoCreate)
                          .setIncludeTopicAuthorizedOperations(true),
                      (short) 12));
      var answer = response.data().topics().iterator().next();
      Errors error = Errors.forCode(answer.errorCode());
      return error == Errors.NONE ? "NONE ops=" + answer.topicAuthorizedOperations() : error.name();
    };
  }

  private static Probe allTopics() {
    return (alice, target) -> {
      MetadataResponse response =
          (MetadataResponse)
              alice.send(
                  new MetadataRequest(new MetadataRequestData().setTopics(null), (short) 12));
      return "topics=" + response.data().topics().size();
    };
  }

  private static Probe produce() {
    return produce(
        null, MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("v".getBytes())));
  }

  /** A transactional batch in a Produce of transactional id {@code tx}. */
  private static Probe transactionalProduce() {
    return produce(
        "tx",
        MemoryRecords.withTransactionalRecords(
            Compression.NONE, 7L, (short) 0, 0, new SimpleRecord("v".getBytes())));
  }

  private static Probe produce(String transactionalId, MemoryRecords records) {
    return (alice, target) -> {
      ProduceRequestData data =
          new ProduceRequestData()
              .setTransactionalId(transactionalId)
              .setAcks((short) 1)
              .setTimeoutMs(10_000)
              .setTopicData(
                  new ProduceRequestData.TopicProduceDataCollection(
                      List.of(
                              new ProduceRequestData.TopicProduceData()
                                  .setName(TOPIC)
                                  .setPartitionData(
                                      List.of(
                                          new ProduceRequestData.PartitionProduceData()
                                              .setIndex(0)
                                              .setRecords(records))))
                          .iterator()));
      ProduceResponse response = (ProduceResponse) alice.send(new ProduceRequest(data, (short) 9));
      return Errors.forCode(
              response.data().responses().iterator().next().partitionResponses().get(0).errorCode())
          .name();
    };
  }

  private static Probe describeProducers() {
    return (alice, target) -> {
      DescribeProducersRequestData data = new DescribeProducersRequestData();
      data.topics()
          .add(
              new DescribeProducersRequestData.TopicRequest()
                  .setName(TOPIC)
                  .setPartitionIndexes(List.of(0)));
      DescribeProducersResponse response =
          (DescribeProducersResponse)
              alice.send(new DescribeProducersRequest.Builder(data).build((short) 0));
      return Errors.forCode(response.data().topics().get(0).partitions().get(0).errorCode()).name();
    };
  }

  private static Probe writeTxnMarkers() {
    return (alice, target) -> {
      TopicPartition tp = new TopicPartition(TOPIC, 0);
      WriteTxnMarkersResponse response =
          (WriteTxnMarkersResponse)
              alice.send(
                  new WriteTxnMarkersRequest.Builder(
                          List.of(
                              new WriteTxnMarkersRequest.TxnMarkerEntry(
                                  4242L, (short) 0, 0, TransactionResult.ABORT, List.of(tp))))
                      .build((short) 1));
      return response.errorsByProducerId().get(4242L).get(tp).name();
    };
  }

  private static Probe fetch() {
    return (alice, target) -> {
      FetchResponse response =
          (FetchResponse)
              alice.send(
                  FetchRequest.Builder.forConsumer(
                          (short) 12,
                          0,
                          0,
                          Map.of(
                              new TopicPartition(TOPIC, 0),
                              new FetchRequest.PartitionData(
                                  Uuid.ZERO_UUID, 0, -1, 1_000, Optional.empty())))
                      .build((short) 12));
      return Errors.forCode(response.data().responses().get(0).partitions().get(0).errorCode())
          .name();
    };
  }

  private static Probe listOffsets() {
    return (alice, target) -> {
      ListOffsetsResponse response =
          (ListOffsetsResponse)
              alice.send(
                  ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                      .setTargetTimes(
                          List.of(
                              new ListOffsetsRequestData.ListOffsetsTopic()
                                  .setName(TOPIC)
                                  .setPartitions(
                                      List.of(
                                          new ListOffsetsRequestData.ListOffsetsPartition()
                                              .setPartitionIndex(0)
                                              .setTimestamp(-1)))))
                      .build((short) 7));
      return Errors.forCode(response.data().topics().get(0).partitions().get(0).errorCode()).name();
    };
  }

  private static Probe offsetForLeaderEpoch() {
    return (alice, target) -> {
      var topics = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
      topics.add(
          new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic()
              .setTopic(TOPIC)
              .setPartitions(
                  List.of(
                      new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition()
                          .setPartition(0)
                          .setLeaderEpoch(0)
                          .setCurrentLeaderEpoch(-1))));
      OffsetsForLeaderEpochResponse response =
          (OffsetsForLeaderEpochResponse)
              alice.send(OffsetsForLeaderEpochRequest.Builder.forConsumer(topics).build((short) 4));
      return Errors.forCode(
              response.data().topics().iterator().next().partitions().get(0).errorCode())
          .name();
    };
  }

  private static Probe deleteRecords() {
    return (alice, target) -> {
      DeleteRecordsResponse response =
          (DeleteRecordsResponse)
              alice.send(
                  new DeleteRecordsRequest.Builder(
                          new DeleteRecordsRequestData()
                              .setTimeoutMs(10_000)
                              .setTopics(
                                  List.of(
                                      new DeleteRecordsRequestData.DeleteRecordsTopic()
                                          .setName(TOPIC)
                                          .setPartitions(
                                              List.of(
                                                  new DeleteRecordsRequestData
                                                          .DeleteRecordsPartition()
                                                      .setPartitionIndex(0)
                                                      .setOffset(0))))))
                      .build((short) 2));
      return Errors.forCode(
              response.data().topics().iterator().next().partitions().iterator().next().errorCode())
          .name();
    };
  }

  private static Probe createTopic(String name) {
    return (alice, target) -> {
      var topics = new CreateTopicsRequestData.CreatableTopicCollection();
      topics.add(
          new CreateTopicsRequestData.CreatableTopic()
              .setName(name)
              .setNumPartitions(1)
              .setReplicationFactor((short) 1));
      CreateTopicsResponse response =
          (CreateTopicsResponse)
              alice.send(
                  new CreateTopicsRequest.Builder(
                          new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000))
                      .build((short) 7));
      return Errors.forCode(response.data().topics().iterator().next().errorCode()).name();
    };
  }

  private static Probe createPartitions() {
    return (alice, target) -> {
      var topics = new CreatePartitionsRequestData.CreatePartitionsTopicCollection();
      topics.add(
          new CreatePartitionsRequestData.CreatePartitionsTopic()
              .setName(TOPIC)
              .setCount(2)
              .setAssignments(null));
      CreatePartitionsResponse response =
          (CreatePartitionsResponse)
              alice.send(
                  new CreatePartitionsRequest.Builder(
                          new CreatePartitionsRequestData()
                              .setTopics(topics)
                              .setTimeoutMs(30_000)
                              .setValidateOnly(true))
                      .build((short) 3));
      return Errors.forCode(response.data().results().get(0).errorCode()).name();
    };
  }

  private static Probe deleteTopic(String name) {
    return (alice, target) -> {
      DeleteTopicsResponse response =
          (DeleteTopicsResponse)
              alice.send(
                  new DeleteTopicsRequest.Builder(
                          new DeleteTopicsRequestData()
                              .setTopicNames(List.of(name))
                              .setTimeoutMs(30_000))
                      .build((short) 5));
      return Errors.forCode(response.data().responses().iterator().next().errorCode()).name();
    };
  }

  private static Probe describeConfigs(ConfigResource.Type type) {
    return (alice, target) -> {
      String name = type == ConfigResource.Type.TOPIC ? TOPIC : String.valueOf(target.brokerId());
      DescribeConfigsResponse response =
          (DescribeConfigsResponse)
              alice.send(
                  new DescribeConfigsRequest.Builder(
                          new DescribeConfigsRequestData()
                              .setResources(
                                  List.of(
                                      new DescribeConfigsRequestData.DescribeConfigsResource()
                                          .setResourceType(type.id())
                                          .setResourceName(name)
                                          .setConfigurationKeys(List.of("retention.ms")))))
                      .build((short) 4));
      return Errors.forCode(response.data().results().get(0).errorCode()).name();
    };
  }

  private static Probe alterConfigs() {
    return (alice, target) -> {
      var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
      configs.add(
          new IncrementalAlterConfigsRequestData.AlterableConfig()
              .setName("retention.ms")
              .setConfigOperation((byte) 0)
              .setValue("86400000"));
      var resources = new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
      resources.add(
          new IncrementalAlterConfigsRequestData.AlterConfigsResource()
              .setResourceType(ConfigResource.Type.TOPIC.id())
              .setResourceName(TOPIC)
              .setConfigs(configs));
      IncrementalAlterConfigsResponse response =
          (IncrementalAlterConfigsResponse)
              alice.send(
                  new IncrementalAlterConfigsRequest.Builder(
                          new IncrementalAlterConfigsRequestData()
                              .setResources(resources)
                              .setValidateOnly(true))
                      .build((short) 1));
      return Errors.forCode(response.data().responses().get(0).errorCode()).name();
    };
  }

  private static Probe findCoordinator() {
    return (alice, target) -> {
      FindCoordinatorResponse response =
          (FindCoordinatorResponse)
              alice.send(
                  new FindCoordinatorRequest.Builder(
                          new FindCoordinatorRequestData()
                              .setKeyType((byte) 0)
                              .setCoordinatorKeys(List.of(GROUP)))
                      .build((short) 4));
      return Errors.forCode(response.data().coordinators().get(0).errorCode()).name();
    };
  }

  private static Probe joinGroup() {
    return (alice, target) -> {
      var protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
      protocols.add(
          new JoinGroupRequestData.JoinGroupRequestProtocol()
              .setName("range")
              .setMetadata(new byte[0]));
      JoinGroupResponse response =
          (JoinGroupResponse)
              alice.send(
                  new JoinGroupRequest.Builder(
                          new JoinGroupRequestData()
                              .setGroupId(GROUP)
                              .setSessionTimeoutMs(10_000)
                              .setRebalanceTimeoutMs(10_000)
                              .setMemberId("")
                              .setProtocolType("consumer")
                              .setProtocols(protocols))
                      .build((short) 9));
      return Errors.forCode(response.data().errorCode()).name();
    };
  }

  private static Probe commit() {
    return (alice, target) -> {
      OffsetCommitResponse response =
          (OffsetCommitResponse)
              alice.send(
                  OffsetCommitRequest.Builder.forTopicNames(
                          new OffsetCommitRequestData()
                              .setGroupId(GROUP)
                              .setGenerationIdOrMemberEpoch(-1)
                              .setMemberId("")
                              .setTopics(
                                  List.of(
                                      new OffsetCommitRequestData.OffsetCommitRequestTopic()
                                          .setName(TOPIC)
                                          .setPartitions(
                                              List.of(
                                                  new OffsetCommitRequestData
                                                          .OffsetCommitRequestPartition()
                                                      .setPartitionIndex(0)
                                                      .setCommittedOffset(0))))))
                      .build((short) 8));
      return Errors.forCode(response.data().topics().get(0).partitions().get(0).errorCode()).name();
    };
  }

  private static Probe fetchOffsets() {
    return (alice, target) -> {
      OffsetFetchResponse response =
          (OffsetFetchResponse)
              alice.send(
                  OffsetFetchRequest.Builder.forTopicNames(
                          new OffsetFetchRequestData()
                              .setGroups(
                                  List.of(
                                      new OffsetFetchRequestData.OffsetFetchRequestGroup()
                                          .setGroupId(GROUP)
                                          .setTopics(null))),
                          false)
                      .build((short) 8));
      return Errors.forCode(response.data().groups().get(0).errorCode()).name();
    };
  }

  private static Probe describeGroup() {
    return (alice, target) -> {
      DescribeGroupsResponse response =
          (DescribeGroupsResponse)
              alice.send(
                  new DescribeGroupsRequest.Builder(
                          new DescribeGroupsRequestData().setGroups(List.of(GROUP)))
                      .build((short) 5));
      return Errors.forCode(response.data().groups().get(0).errorCode()).name();
    };
  }

  private static Probe deleteGroup() {
    return (alice, target) -> {
      DeleteGroupsResponse response =
          (DeleteGroupsResponse)
              alice.send(
                  new DeleteGroupsRequest.Builder(
                          new DeleteGroupsRequestData().setGroupsNames(List.of(GROUP)))
                      .build((short) 2));
      return Errors.forCode(response.data().results().iterator().next().errorCode()).name();
    };
  }

  /** Asked again while the answer is COORDINATOR_LOAD_IN_PROGRESS: Kafka's first block of ids. */
  private static Probe initProducerId() {
    return (alice, target) -> {
      Errors[] error = {Errors.UNKNOWN_SERVER_ERROR};
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                InitProducerIdResponse response =
                    (InitProducerIdResponse)
                        alice.send(
                            new InitProducerIdRequest.Builder(
                                    new InitProducerIdRequestData()
                                        .setTransactionalId(null)
                                        .setTransactionTimeoutMs(60_000))
                                .build((short) 4));
                error[0] = Errors.forCode(response.data().errorCode());
                return error[0] != Errors.COORDINATOR_LOAD_IN_PROGRESS;
              });
      return error[0].name();
    };
  }

  /** Asked again while the coordinator is not ready to answer (it loads, or the topic is new). */
  private static Errors untilCoordinatorReady(java.util.concurrent.Callable<Errors> ask) {
    Errors[] error = {Errors.UNKNOWN_SERVER_ERROR};
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              error[0] = ask.call();
              return error[0] != Errors.COORDINATOR_LOAD_IN_PROGRESS
                  && error[0] != Errors.COORDINATOR_NOT_AVAILABLE
                  && error[0] != Errors.NOT_COORDINATOR
                  && error[0] != Errors.CONCURRENT_TRANSACTIONS;
            });
    return error[0];
  }

  private static Probe findTransactionCoordinator() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  FindCoordinatorResponse response =
                      (FindCoordinatorResponse)
                          alice.send(
                              new FindCoordinatorRequest.Builder(
                                      new FindCoordinatorRequestData()
                                          .setKeyType((byte) 1)
                                          .setCoordinatorKeys(List.of(TX)))
                                  .build((short) 4));
                  return Errors.forCode(response.data().coordinators().get(0).errorCode());
                })
            .name();
  }

  private static Probe transactionalInitProducerId() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  InitProducerIdResponse response =
                      (InitProducerIdResponse)
                          alice.send(
                              new InitProducerIdRequest.Builder(
                                      new InitProducerIdRequestData()
                                          .setTransactionalId(TX)
                                          .setTransactionTimeoutMs(60_000))
                                  .build((short) 4));
                  return Errors.forCode(response.data().errorCode());
                })
            .name();
  }

  private static Probe addPartitionsToTxn() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  AddPartitionsToTxnResponse response =
                      (AddPartitionsToTxnResponse)
                          alice.send(
                              AddPartitionsToTxnRequest.Builder.forClient(
                                      TX,
                                      UNKNOWN_PRODUCER_ID,
                                      (short) 0,
                                      List.of(new TopicPartition(TOPIC, 0)))
                                  .build((short) 3));
                  return response
                      .errors()
                      .get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID)
                      .get(new TopicPartition(TOPIC, 0));
                })
            .name();
  }

  private static Probe verifyPartitionsOfTxn() {
    return (alice, target) -> {
      var topics = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
      topics.add(
          new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic()
              .setName(TOPIC)
              .setPartitions(List.of(0)));
      var transactions =
          new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
      transactions.add(
          new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction()
              .setTransactionalId(TX)
              .setProducerId(UNKNOWN_PRODUCER_ID)
              .setProducerEpoch((short) 0)
              .setVerifyOnly(true)
              .setTopics(topics));
      AddPartitionsToTxnResponse response =
          (AddPartitionsToTxnResponse)
              alice.send(
                  AddPartitionsToTxnRequest.Builder.forBroker(transactions).build((short) 4));
      return Errors.forCode(response.data().errorCode()).name();
    };
  }

  private static Probe addOffsetsToTxn() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  AddOffsetsToTxnResponse response =
                      (AddOffsetsToTxnResponse)
                          alice.send(
                              new AddOffsetsToTxnRequest.Builder(
                                      new AddOffsetsToTxnRequestData()
                                          .setTransactionalId(TX)
                                          .setProducerId(UNKNOWN_PRODUCER_ID)
                                          .setProducerEpoch((short) 0)
                                          .setGroupId(GROUP))
                                  .build((short) 3));
                  return Errors.forCode(response.data().errorCode());
                })
            .name();
  }

  private static Probe endTxn() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  EndTxnResponse response =
                      (EndTxnResponse)
                          alice.send(
                              new EndTxnRequest.Builder(
                                      new EndTxnRequestData()
                                          .setTransactionalId(TX)
                                          .setProducerId(UNKNOWN_PRODUCER_ID)
                                          .setProducerEpoch((short) 0)
                                          .setCommitted(true),
                                      false)
                                  .build((short) 3));
                  return Errors.forCode(response.data().errorCode());
                })
            .name();
  }

  private static Probe txnOffsetCommit() {
    return (alice, target) ->
        untilCoordinatorReady(
                () -> {
                  TxnOffsetCommitResponse response =
                      (TxnOffsetCommitResponse)
                          alice.send(
                              new TxnOffsetCommitRequest.Builder(
                                      TX,
                                      GROUP,
                                      UNKNOWN_PRODUCER_ID,
                                      (short) 0,
                                      Map.of(
                                          new TopicPartition(TOPIC, 0),
                                          new TxnOffsetCommitRequest.CommittedOffset(
                                              1L, "", java.util.Optional.empty())),
                                      false)
                                  .build((short) 3));
                  return response.errors().get(new TopicPartition(TOPIC, 0));
                })
            .name();
  }

  private static Probe describeTransactions() {
    return (alice, target) -> {
      DescribeTransactionsResponse response =
          (DescribeTransactionsResponse)
              alice.send(
                  new DescribeTransactionsRequest.Builder(
                          new DescribeTransactionsRequestData().setTransactionalIds(List.of(TX)))
                      .build((short) 0));
      return Errors.forCode(response.data().transactionStates().get(0).errorCode()).name();
    };
  }

  private static Probe listTransactions() {
    return (alice, target) -> {
      ListTransactionsResponse response =
          (ListTransactionsResponse)
              alice.send(
                  new ListTransactionsRequest.Builder(new ListTransactionsRequestData())
                      .build((short) 1));
      return Errors.forCode(response.data().errorCode()).name()
          + " ids="
          + response.data().transactionStates().stream()
              .map(ListTransactionsResponseData.TransactionState::transactionalId)
              .filter(id -> id.equals(TX))
              .toList();
    };
  }

  private static Probe createAcl(AclBinding binding) {
    return (alice, target) -> {
      CreateAclsResponse response =
          (CreateAclsResponse)
              alice.send(
                  new CreateAclsRequest.Builder(
                          new CreateAclsRequestData()
                              .setCreations(List.of(CreateAclsRequest.aclCreation(binding))))
                      .build((short) 3));
      Errors error = Errors.forCode(response.results().get(0).errorCode());
      if (error == Errors.NONE) { // not alice's: gone before the next case
        target.admin().deleteAcls(List.of(binding.toFilter())).all().get();
      }
      return error.name();
    };
  }

  private static Probe describeAcls() {
    return (alice, target) -> {
      DescribeAclsResponse response =
          (DescribeAclsResponse)
              alice.send(new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build((short) 3));
      Errors error = response.error().error();
      return error == Errors.NONE
          ? "NONE acls=" + DescribeAclsResponse.aclBindings(response.acls()).size()
          : error.name();
    };
  }

  private static Probe describeScram() {
    return (alice, target) -> {
      DescribeUserScramCredentialsResponse response =
          (DescribeUserScramCredentialsResponse)
              alice.send(
                  new DescribeUserScramCredentialsRequest.Builder(
                          new DescribeUserScramCredentialsRequestData())
                      .build((short) 0));
      return Errors.forCode(response.data().errorCode()).name();
    };
  }

  private static Probe alterScram(int iterations) {
    return alterScram(iterations, new byte[64]);
  }

  private static Probe alterScram(int iterations, byte[] saltedPassword) {
    return (alice, target) -> {
      AlterUserScramCredentialsResponse response =
          (AlterUserScramCredentialsResponse)
              alice.send(
                  new AlterUserScramCredentialsRequest.Builder(
                          new AlterUserScramCredentialsRequestData()
                              .setUpsertions(
                                  List.of(
                                      new AlterUserScramCredentialsRequestData
                                              .ScramCredentialUpsertion()
                                          .setName("erin")
                                          .setMechanism((byte) 2)
                                          .setIterations(iterations)
                                          .setSalt(new byte[16])
                                          .setSaltedPassword(saltedPassword))))
                      .build((short) 0));
      return Errors.forCode(response.data().results().get(0).errorCode()).name();
    };
  }

  private static Probe electLeaders() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.ElectLeadersResponse)
              alice.send(
                  new org.apache.kafka.common.requests.ElectLeadersRequest.Builder(
                          org.apache.kafka.common.ElectionType.PREFERRED,
                          List.of(new org.apache.kafka.common.TopicPartition(TOPIC, 0)),
                          30_000)
                      .build((short) 2));
      return Errors.forCode(response.data().errorCode()).name()
          + " "
          + response.data().replicaElectionResults().stream()
              .flatMap(t -> t.partitionResult().stream())
              .map(p -> Errors.forCode(p.errorCode()).name())
              .toList();
    };
  }

  private static Probe cancelReassignment() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse)
              alice.send(
                  SampleRequests.of(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, (short) 1, TOPIC));
      return Errors.forCode(response.data().errorCode()).name()
          + " "
          + response.data().responses().stream()
              .flatMap(t -> t.partitions().stream())
              .map(p -> Errors.forCode(p.errorCode()).name())
              .toList();
    };
  }

  private static Probe listReassignments() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.ListPartitionReassignmentsResponse)
              alice.send(SampleRequests.of(ApiKeys.LIST_PARTITION_REASSIGNMENTS, (short) 0, TOPIC));
      Errors error = Errors.forCode(response.data().errorCode());
      return error == Errors.NONE ? "NONE topics=" + response.data().topics().size() : error.name();
    };
  }

  private static Probe describeLogDirs() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.DescribeLogDirsResponse)
              alice.send(
                  new org.apache.kafka.common.requests.DescribeLogDirsRequest.Builder(
                          new org.apache.kafka.common.message.DescribeLogDirsRequestData()
                              .setTopics(null))
                      .build((short) 4));
      Errors error = Errors.forCode(response.data().errorCode());
      return error == Errors.NONE ? "NONE dirs=" + response.data().results().size() : error.name();
    };
  }

  private static Probe alterReplicaLogDirs() {
    return (alice, target) -> {
      var response =
          (org.apache.kafka.common.requests.AlterReplicaLogDirsResponse)
              alice.send(SampleRequests.of(ApiKeys.ALTER_REPLICA_LOG_DIRS, (short) 2, TOPIC));
      return response.data().results().stream()
          .flatMap(t -> t.partitions().stream())
          .map(p -> Errors.forCode(p.errorCode()).name())
          .toList()
          .toString();
    };
  }

  private static Probe describeCluster() {
    return (alice, target) -> {
      DescribeClusterResponse response =
          (DescribeClusterResponse)
              alice.send(
                  new DescribeClusterRequest.Builder(
                          new DescribeClusterRequestData()
                              .setIncludeClusterAuthorizedOperations(true))
                      .build((short) 1));
      Errors error = Errors.forCode(response.data().errorCode());
      return error == Errors.NONE
          ? "NONE ops=" + response.data().clusterAuthorizedOperations()
          : error.name();
    };
  }
}
