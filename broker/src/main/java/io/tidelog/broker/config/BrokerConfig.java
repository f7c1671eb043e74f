package io.tidelog.broker.config;

import static org.apache.kafka.common.config.ConfigDef.Importance.HIGH;
import static org.apache.kafka.common.config.ConfigDef.Importance.LOW;
import static org.apache.kafka.common.config.ConfigDef.Importance.MEDIUM;
import static org.apache.kafka.common.config.ConfigDef.NO_DEFAULT_VALUE;
import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;
import static org.apache.kafka.common.config.ConfigDef.Type.BOOLEAN;
import static org.apache.kafka.common.config.ConfigDef.Type.DOUBLE;
import static org.apache.kafka.common.config.ConfigDef.Type.INT;
import static org.apache.kafka.common.config.ConfigDef.Type.LIST;
import static org.apache.kafka.common.config.ConfigDef.Type.LONG;
import static org.apache.kafka.common.config.ConfigDef.Type.PASSWORD;
import static org.apache.kafka.common.config.ConfigDef.Type.SHORT;
import static org.apache.kafka.common.config.ConfigDef.Type.STRING;

import io.tidelog.broker.log.LogConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.config.types.Password;

/**
 * The broker's settings, under Kafka's {@code server.properties} names and defaults, from a file
 * plus environment overrides ({@code TIDELOG_LOG_DIRS=/data} sets {@code log.dirs}).
 *
 * <p>The {@code log.*} keys are the defaults of the topic configs of the same meaning; {@link
 * #topicDefaults()} maps them onto {@link TopicConfigs}' topic-level names, as Kafka does.
 */
public final class BrokerConfig {
  public static final String NODE_ID = "node.id";
  public static final String LISTENERS = "listeners";
  public static final String ADVERTISED_LISTENERS = "advertised.listeners";
  public static final String LISTENER_SECURITY_PROTOCOL_MAP = "listener.security.protocol.map";
  public static final String INTER_BROKER_LISTENER_NAME = "inter.broker.listener.name";
  public static final String SECURITY_INTER_BROKER_PROTOCOL = "security.inter.broker.protocol";
  public static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";
  public static final String SUPER_USERS = "super.users";
  public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";

  /** The one authorizer served: Kafka's own, as its KRaft brokers run it. */
  public static final String STANDARD_AUTHORIZER =
      "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

  public static final String LOG_DIRS = "log.dirs";
  public static final String NUM_PARTITIONS = "num.partitions";
  public static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";
  public static final String AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable";
  public static final String AUTO_CREATE_PARTITION_RATE = "tidelog.auto.create.partition.rate";
  public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
  public static final String MAX_CONNECTIONS = "max.connections";
  public static final String QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes";
  public static final String MAX_CONNECTIONS_PER_IP = "max.connections.per.ip";
  public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
  public static final String NUM_RECOVERY_THREADS_PER_DATA_DIR =
      "num.recovery.threads.per.data.dir";
  public static final String NUM_IO_THREADS = "num.io.threads";
  public static final String CLUSTER_ID = "cluster.id";
  public static final String BROKER_RACK = "broker.rack";

  public static final String BROKER_SESSION_TIMEOUT_MS = "broker.session.timeout.ms";
  public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
  public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
  public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
  public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
  public static final String FETCH_MAX_BYTES = "fetch.max.bytes";
  public static final String MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS =
      "max.incremental.fetch.session.cache.slots";
  public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES = "replica.fetch.response.max.bytes";
  public static final String FOLLOWER_REPLICATION_THROTTLED_RATE =
      "follower.replication.throttled.rate";
  public static final String LEADER_REPLICATION_THROTTLED_RATE =
      "leader.replication.throttled.rate";
  public static final String REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND =
      "replica.alter.log.dirs.io.max.bytes.per.second";

  /**
   * Keys that Kafka defines only as dynamic broker configs ({@code DynamicConfig.Broker}), not in
   * {@code KafkaConfig}: its DescribeConfigs lists one only once it is set, and as read-only
   * (though AlterConfigs changes it), and so does Tidelog's.
   */
  public static final Set<String> LISTED_WHEN_SET =
      Set.of(
          FOLLOWER_REPLICATION_THROTTLED_RATE,
          LEADER_REPLICATION_THROTTLED_RATE,
          REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND);

  public static final String AUTO_LEADER_REBALANCE_ENABLE = "auto.leader.rebalance.enable";
  public static final String LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS =
      "leader.imbalance.check.interval.seconds";

  public static final String LOG_CLEANER_ENABLE = "log.cleaner.enable";
  public static final String LOG_CLEANER_DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size";
  public static final String LOG_CLEANER_IO_MAX_BYTES_PER_SECOND =
      "log.cleaner.io.max.bytes.per.second";
  public static final String LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms";
  public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
  public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
  public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
  public static final String GROUP_MAX_SIZE = "group.max.size";
  public static final String OFFSETS_TOPIC_NUM_PARTITIONS = "offsets.topic.num.partitions";
  public static final String OFFSETS_TOPIC_REPLICATION_FACTOR = "offsets.topic.replication.factor";
  public static final String OFFSETS_TOPIC_SEGMENT_BYTES = "offsets.topic.segment.bytes";
  public static final String OFFSETS_RETENTION_MINUTES = "offsets.retention.minutes";
  public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS =
      "offsets.retention.check.interval.ms";
  public static final String OFFSETS_COMMIT_TIMEOUT_MS = "offsets.commit.timeout.ms";
  public static final String OFFSET_METADATA_MAX_BYTES = "offset.metadata.max.bytes";
  public static final String TRANSACTION_STATE_LOG_NUM_PARTITIONS =
      "transaction.state.log.num.partitions";
  public static final String TRANSACTION_STATE_LOG_REPLICATION_FACTOR =
      "transaction.state.log.replication.factor";
  public static final String TRANSACTION_STATE_LOG_MIN_ISR = "transaction.state.log.min.isr";
  public static final String TRANSACTION_STATE_LOG_SEGMENT_BYTES =
      "transaction.state.log.segment.bytes";
  public static final String TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE =
      "transaction.state.log.load.buffer.size";
  public static final String TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms";
  public static final String TRANSACTIONAL_ID_EXPIRATION_MS = "transactional.id.expiration.ms";
  public static final String TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS =
      "transaction.abort.timed.out.transaction.cleanup.interval.ms";
  public static final String TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS =
      "transaction.remove.expired.transaction.cleanup.interval.ms";
  public static final String ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS =
      "add.partitions.to.txn.retry.backoff.ms";
  public static final String ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS =
      "add.partitions.to.txn.retry.backoff.max.ms";

  /** Tidelog's own: the etcd cluster that holds the metadata, as a list of client URLs. */
  public static final String ETCD_ENDPOINTS = "tidelog.etcd.endpoints";

  private static final String ETCD_PREFIX = "tidelog.etcd.";

  /** Tidelog's own: the CA (PEM) that signed etcd's certificate, for https:// endpoints. */
  public static final String ETCD_TLS_CA_FILE = "tidelog.etcd.tls.ca.file";

  /** Tidelog's own: the broker's client certificate (PEM) for etcd's --client-cert-auth. */
  public static final String ETCD_TLS_CERT_FILE = "tidelog.etcd.tls.cert.file";

  /** Tidelog's own: the key (PEM, PKCS#8) of the client certificate. */
  public static final String ETCD_TLS_KEY_FILE = "tidelog.etcd.tls.key.file";

  /** Tidelog's own, as Kafka's ssl.endpoint.identification.algorithm: https, or empty for none. */
  public static final String ETCD_TLS_ENDPOINT_IDENTIFICATION_ALGORITHM =
      "tidelog.etcd.tls.endpoint.identification.algorithm";

  /** Tidelog's own: the etcd user, when etcd's authentication is on. */
  public static final String ETCD_USER = "tidelog.etcd.user";

  /** Tidelog's own: the etcd user's password. */
  public static final String ETCD_PASSWORD = "tidelog.etcd.password";

  /**
   * Tidelog's own: the HTTP port of {@code /metrics}, {@code /healthz} and {@code /readyz}; 0 picks
   * a free one.
   */
  public static final String HTTP_PORT = "tidelog.http.port";

  /** Tidelog's own: the address the HTTP port binds; by default the host of the first listener. */
  public static final String HTTP_HOST = "tidelog.http.host";

  /**
   * Tidelog's own: whether {@code /status} and {@code /lag}, which name topics, groups and replica
   * state, answer clients that are not on loopback. Off by default: they answer 403.
   */
  public static final String HTTP_STATUS_REMOTE_ENABLE = "tidelog.http.status.remote.enable";

  /**
   * Tidelog's own: whether {@code /metrics} has series per partition (log offsets and size, group
   * lag); off, only their per-topic sums remain, for clusters with many partitions.
   */
  public static final String METRICS_PARTITION_ENABLE = "tidelog.metrics.partition.enable";

  private static final String ENV_PREFIX = "TIDELOG_";

  /** Broker key to the topic config it sets the default of. */
  private static final Map<String, String> TOPIC_DEFAULTS =
      Map.ofEntries(
          Map.entry("log.segment.bytes", TopicConfig.SEGMENT_BYTES_CONFIG),
          Map.entry("log.roll.ms", TopicConfig.SEGMENT_MS_CONFIG),
          Map.entry("log.index.size.max.bytes", TopicConfig.SEGMENT_INDEX_BYTES_CONFIG),
          Map.entry("log.index.interval.bytes", TopicConfig.INDEX_INTERVAL_BYTES_CONFIG),
          Map.entry("message.max.bytes", TopicConfig.MAX_MESSAGE_BYTES_CONFIG),
          Map.entry("log.retention.ms", TopicConfig.RETENTION_MS_CONFIG),
          Map.entry("log.retention.bytes", TopicConfig.RETENTION_BYTES_CONFIG),
          Map.entry("log.flush.interval.messages", TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG),
          Map.entry("log.flush.interval.ms", TopicConfig.FLUSH_MS_CONFIG),
          Map.entry("log.message.timestamp.type", TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG),
          Map.entry("log.cleanup.policy", TopicConfig.CLEANUP_POLICY_CONFIG),
          Map.entry("log.cleaner.delete.retention.ms", TopicConfig.DELETE_RETENTION_MS_CONFIG),
          Map.entry(
              "log.cleaner.min.cleanable.ratio", TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG),
          Map.entry("log.cleaner.min.compaction.lag.ms", TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG),
          Map.entry(
              LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG,
              LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG),
          Map.entry("compression.type", TopicConfig.COMPRESSION_TYPE_CONFIG),
          Map.entry("compression.gzip.level", TopicConfig.COMPRESSION_GZIP_LEVEL_CONFIG),
          Map.entry("compression.lz4.level", TopicConfig.COMPRESSION_LZ4_LEVEL_CONFIG),
          Map.entry("compression.zstd.level", TopicConfig.COMPRESSION_ZSTD_LEVEL_CONFIG),
          Map.entry("min.insync.replicas", TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG),
          Map.entry(
              "unclean.leader.election.enable", TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG),
          Map.entry("log.segment.delete.delay.ms", TopicConfig.FILE_DELETE_DELAY_MS_CONFIG));

  public static final ConfigDef CONFIG_DEF = definitions();

  private final Map<String, Object> values;
  private final Map<String, String> topicDefaults;
  private final Map<String, String> raw;

  private BrokerConfig(
      Map<String, Object> values, Map<String, String> topicDefaults, Map<String, String> raw) {
    this.values = values;
    this.topicDefaults = topicDefaults;
    this.raw = raw;
  }

  private static ConfigDef definitions() {
    ConfigDef def =
        new ConfigDef()
            .define(NODE_ID, INT, NO_DEFAULT_VALUE, atLeast(0), HIGH, "The broker's id.")
            .define(
                LISTENERS,
                LIST,
                "PLAINTEXT://127.0.0.1:9092",
                HIGH,
                "Where the broker listens, as name://host:port.")
            .define(
                ADVERTISED_LISTENERS,
                LIST,
                null,
                HIGH,
                "Where clients reach the broker, per listener; defaults to the listeners.")
            .define(
                LISTENER_SECURITY_PROTOCOL_MAP,
                LIST,
                Listeners.DEFAULT_PROTOCOL_MAP,
                HIGH,
                "Each listener name's security protocol, as NAME:PROTOCOL.")
            .define(
                INTER_BROKER_LISTENER_NAME,
                STRING,
                null,
                HIGH,
                "The listener that followers fetch from leaders through; by default the one"
                    + " named by security.inter.broker.protocol.")
            .define(
                SECURITY_INTER_BROKER_PROTOCOL,
                STRING,
                "PLAINTEXT",
                HIGH,
                "The inter-broker listener's name when inter.broker.listener.name is not set.")
            .define(
                AUTHORIZER_CLASS_NAME,
                STRING,
                "",
                HIGH,
                "Empty: no authorization. "
                    + STANDARD_AUTHORIZER
                    + ": ACLs, as Kafka's KRaft brokers authorize.")
            .define(
                SUPER_USERS,
                STRING,
                null,
                HIGH,
                "Principals allowed everything, separated by semicolons: User:admin;User:broker.")
            .define(
                ALLOW_EVERYONE_IF_NO_ACL_FOUND,
                BOOLEAN,
                false,
                HIGH,
                "Whether a resource that no ACL names is open to everyone.")
            .define(
                LOG_DIRS, LIST, NO_DEFAULT_VALUE, HIGH, "The directories of the partition logs.")
            .define(
                NUM_PARTITIONS, INT, 1, atLeast(1), MEDIUM, "Partitions of an auto-created topic.")
            .define(
                DEFAULT_REPLICATION_FACTOR,
                INT,
                1,
                atLeast(1),
                MEDIUM,
                "Replication factor of an auto-created topic.")
            .define(
                AUTO_CREATE_TOPICS_ENABLE,
                BOOLEAN,
                true,
                MEDIUM,
                "Create a topic when a client asks for its metadata.")
            .define(
                AUTO_CREATE_PARTITION_RATE,
                DOUBLE,
                10.0,
                between(0.001, 1_000_000.0),
                MEDIUM,
                "Partitions per second that Metadata requests may create when they name unknown"
                    + " topics (auto.create.topics.enable), for the broker as a whole: a token"
                    + " bucket as Kafka's controller_mutation_rate quota, with a burst of 11 s."
                    + " Beyond it a topic is answered THROTTLING_QUOTA_EXCEEDED, and the client"
                    + " asks again later.")
            .define(
                SOCKET_REQUEST_MAX_BYTES,
                INT,
                100 * 1024 * 1024,
                atLeast(1),
                MEDIUM,
                "The largest request frame; a larger one closes the connection.")
            .define(
                QUEUED_MAX_REQUEST_BYTES,
                LONG,
                null,
                MEDIUM,
                "The memory that requests read but not yet answered may hold, together; a"
                    + " connection whose next request does not fit waits until answers free"
                    + " some. At least socket.request.max.bytes. Default: a quarter of the"
                    + " broker's maximum heap, or socket.request.max.bytes if that is more."
                    + " -1 sets no bound, as Kafka's default does.")
            .define(
                MAX_CONNECTIONS,
                INT,
                Integer.MAX_VALUE,
                atLeast(0),
                MEDIUM,
                "The most connections the Kafka listener keeps open; a new one beyond it is"
                    + " closed at once.")
            .define(
                MAX_CONNECTIONS_PER_IP,
                INT,
                1_000,
                atLeast(0),
                MEDIUM,
                "The most connections one client address may keep open; a new one beyond it is"
                    + " closed at once. 1,000 by default (Kafka sets no bound), so that one"
                    + " address cannot take every file handle.")
            .define(
                CONNECTIONS_MAX_IDLE_MS,
                LONG,
                600_000L,
                between(1L, (long) Integer.MAX_VALUE),
                MEDIUM,
                "A connection that neither reads nor writes for this long is closed.")
            .define(
                NUM_RECOVERY_THREADS_PER_DATA_DIR,
                INT,
                1,
                atLeast(1),
                LOW,
                "Threads per log directory that load logs at start.")
            .define(
                NUM_IO_THREADS,
                INT,
                8,
                between(1, 256),
                MEDIUM,
                "Storage shards: ordered threads that own the partitions' logs.")
            .define(CLUSTER_ID, STRING, "tidelog", MEDIUM, "The cluster id reported to clients.")
            .define(BROKER_RACK, STRING, null, LOW, "The broker's rack.")
            .define(
                ETCD_ENDPOINTS,
                LIST,
                "http://127.0.0.1:2379",
                HIGH,
                "The etcd client URLs of the cluster's metadata store.")
            .define(
                BROKER_SESSION_TIMEOUT_MS,
                INT,
                9000,
                atLeast(1000),
                MEDIUM,
                "The TTL of the broker's etcd lease: a broker silent this long is dead.")
            .define(
                REPLICA_LAG_TIME_MAX_MS,
                LONG,
                30_000L,
                atLeast(1),
                MEDIUM,
                "A follower not caught up within this time leaves the ISR.")
            .define(
                REQUEST_TIMEOUT_MS,
                INT,
                30_000,
                atLeast(0),
                MEDIUM,
                "How long the broker waits for the replication of the transaction markers that"
                    + " WriteTxnMarkers writes, as Kafka's broker does.")
            .define(
                REPLICA_FETCH_WAIT_MAX_MS,
                INT,
                500,
                atLeast(0),
                MEDIUM,
                "How long a follower's fetch waits at the leader for new data.")
            .define(
                FETCH_MAX_BYTES,
                INT,
                55 * 1024 * 1024,
                atLeast(1024),
                MEDIUM,
                "The most record bytes one Fetch response carries, whatever the request's"
                    + " max_bytes asks (as in Kafka, the first batch goes out even when larger).")
            .define(
                MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS,
                INT,
                1000,
                atLeast(0),
                MEDIUM,
                "The most incremental fetch sessions (KIP-227) the broker keeps; 0 for none.")
            .define(
                REPLICA_FETCH_MAX_BYTES,
                INT,
                1024 * 1024,
                atLeast(0),
                MEDIUM,
                "Bytes a follower fetches per partition per request.")
            .define(
                REPLICA_FETCH_RESPONSE_MAX_BYTES,
                INT,
                10 * 1024 * 1024,
                atLeast(0),
                MEDIUM,
                "Bytes a follower fetches per request.")
            .define(
                LEADER_REPLICATION_THROTTLED_RATE,
                LONG,
                Long.MAX_VALUE,
                atLeast(0),
                MEDIUM,
                "The bytes per second this broker, as leader, sends at most to followers that are"
                    + " out of the ISR, for the replicas here that topics'"
                    + " leader.replication.throttled.replicas list.")
            .define(
                FOLLOWER_REPLICATION_THROTTLED_RATE,
                LONG,
                Long.MAX_VALUE,
                atLeast(0),
                MEDIUM,
                "The bytes per second this broker's followers fetch, at most, for the replicas"
                    + " that topics' follower.replication.throttled.replicas list while they are"
                    + " behind their leader's high watermark.")
            .define(
                REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND,
                LONG,
                Long.MAX_VALUE,
                atLeast(0),
                MEDIUM,
                "The bytes per second that replicas moving between this broker's log directories"
                    + " copy, at most, all together.")
            .define(
                AUTO_LEADER_REBALANCE_ENABLE,
                BOOLEAN,
                true,
                MEDIUM,
                "Move leadership back to preferred replicas periodically.")
            .define(
                LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS,
                LONG,
                300L,
                atLeast(1),
                MEDIUM,
                "How often the controller checks for preferred-leader imbalance.")
            .define(
                LOG_CLEANER_ENABLE,
                BOOLEAN,
                true,
                MEDIUM,
                "Run the log cleaner, which compacts topics with cleanup.policy=compact.")
            .define(
                LOG_CLEANER_DEDUPE_BUFFER_SIZE,
                LONG,
                128L * 1024 * 1024,
                atLeast(1024 * 1024),
                MEDIUM,
                "Memory for the cleaner's map of keys to their latest offsets (24 bytes a key).")
            .define(
                LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
                DOUBLE,
                Double.MAX_VALUE,
                atLeast(1),
                MEDIUM,
                "How fast the cleaner may read logs.")
            .define(
                LOG_CLEANER_BACKOFF_MS,
                LONG,
                15_000L,
                atLeast(1),
                MEDIUM,
                "How often the cleaner looks for logs to clean.")
            .define(
                GROUP_INITIAL_REBALANCE_DELAY_MS,
                INT,
                3000,
                atLeast(0),
                MEDIUM,
                "How long the first rebalance of an empty group waits for more members.")
            .define(
                GROUP_MIN_SESSION_TIMEOUT_MS,
                INT,
                6000,
                atLeast(1),
                MEDIUM,
                "The smallest session timeout a group member may ask for.")
            .define(
                GROUP_MAX_SESSION_TIMEOUT_MS,
                INT,
                1_800_000,
                atLeast(1),
                MEDIUM,
                "The largest session timeout a group member may ask for.")
            .define(
                GROUP_MAX_SIZE,
                INT,
                Integer.MAX_VALUE,
                atLeast(1),
                MEDIUM,
                "The most members a group may have.")
            .define(
                OFFSETS_TOPIC_NUM_PARTITIONS,
                INT,
                50,
                atLeast(1),
                HIGH,
                "Partitions of __consumer_offsets; fixed once the topic exists.")
            .define(
                OFFSETS_TOPIC_REPLICATION_FACTOR,
                INT,
                3,
                atLeast(1),
                HIGH,
                "Replication factor of __consumer_offsets, capped at the live brokers.")
            .define(
                OFFSETS_TOPIC_SEGMENT_BYTES,
                INT,
                100 * 1024 * 1024,
                atLeast(1024),
                MEDIUM,
                "Segment size of __consumer_offsets.")
            .define(
                OFFSETS_RETENTION_MINUTES,
                INT,
                7 * 24 * 60,
                atLeast(1),
                HIGH,
                "How long committed offsets of an empty group are kept.")
            .define(
                OFFSETS_RETENTION_CHECK_INTERVAL_MS,
                LONG,
                600_000L,
                atLeast(1),
                MEDIUM,
                "How often expired offsets are looked for.")
            .define(
                OFFSETS_COMMIT_TIMEOUT_MS,
                INT,
                5000,
                atLeast(1),
                MEDIUM,
                "How long an offset commit waits for the replicas of __consumer_offsets.")
            .define(
                OFFSET_METADATA_MAX_BYTES,
                INT,
                4096,
                atLeast(0),
                LOW,
                "The largest metadata string of a committed offset.")
            .define(
                TRANSACTION_STATE_LOG_NUM_PARTITIONS,
                INT,
                50,
                atLeast(1),
                HIGH,
                "Partitions of __transaction_state; fixed once the topic exists.")
            .define(
                TRANSACTION_STATE_LOG_REPLICATION_FACTOR,
                SHORT,
                (short) 3,
                atLeast(1),
                HIGH,
                "Replication factor of __transaction_state, capped at the live brokers.")
            .define(
                TRANSACTION_STATE_LOG_MIN_ISR,
                INT,
                2,
                atLeast(1),
                HIGH,
                "min.insync.replicas of __transaction_state, capped at its replication factor.")
            .define(
                TRANSACTION_STATE_LOG_SEGMENT_BYTES,
                INT,
                100 * 1024 * 1024,
                atLeast(1024),
                HIGH,
                "Segment size of __transaction_state.")
            .define(
                TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE,
                INT,
                5 * 1024 * 1024,
                atLeast(1),
                LOW,
                "Bytes read per step when a coordinator loads a partition of __transaction_state.")
            .define(
                TRANSACTION_MAX_TIMEOUT_MS,
                INT,
                900_000,
                atLeast(1),
                HIGH,
                "The longest transaction.timeout.ms a producer may ask for; more is"
                    + " INVALID_TRANSACTION_TIMEOUT.")
            .define(
                TRANSACTIONAL_ID_EXPIRATION_MS,
                INT,
                7 * 24 * 3_600_000,
                atLeast(1),
                HIGH,
                "How long a transactional id without a transaction in progress is kept after its"
                    + " last update.")
            .define(
                TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS,
                INT,
                10_000,
                atLeast(1),
                LOW,
                "How often the coordinator aborts transactions older than their timeout.")
            .define(
                TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS,
                INT,
                3_600_000,
                atLeast(1),
                LOW,
                "How often the coordinator removes expired transactional ids.")
            .define(
                ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS,
                INT,
                20,
                atLeast(1),
                HIGH,
                "How long a leader waits before it asks again to add a partition to a"
                    + " transaction (transaction protocol 2) that the previous one still holds.")
            .define(
                ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS,
                INT,
                100,
                atLeast(0),
                HIGH,
                "How long a leader keeps asking to add a partition to a transaction before it"
                    + " answers CONCURRENT_TRANSACTIONS; at most request.timeout.ms.")
            .define(
                ETCD_TLS_CA_FILE,
                STRING,
                null,
                MEDIUM,
                "The CAs (PEM) that sign etcd's certificate; by default the JVM's trusted CAs. The"
                    + " three tidelog.etcd.tls files are read again when they change: later"
                    + " connections to etcd use the new ones, with no restart.")
            .define(
                ETCD_TLS_CERT_FILE,
                STRING,
                null,
                MEDIUM,
                "This broker's client certificate (PEM) for etcd's --client-cert-auth.")
            .define(
                ETCD_TLS_KEY_FILE,
                STRING,
                null,
                MEDIUM,
                "The key (PEM, PKCS#8) of tidelog.etcd.tls.cert.file.")
            .define(
                ETCD_TLS_ENDPOINT_IDENTIFICATION_ALGORITHM,
                STRING,
                "https",
                ConfigDef.ValidString.in("https", ""),
                LOW,
                "As Kafka's ssl.endpoint.identification.algorithm, for etcd: https checks that"
                    + " etcd's certificate names the host of its endpoint; empty checks only that"
                    + " a trusted CA signed it.")
            .define(ETCD_USER, STRING, null, MEDIUM, "The etcd user, when etcd's auth is on.")
            .define(ETCD_PASSWORD, PASSWORD, null, MEDIUM, "The etcd user's password.")
            .define(
                HTTP_PORT,
                INT,
                8080,
                between(0, 65535),
                MEDIUM,
                "The port of /metrics, /healthz and /readyz (and /status and /lag).")
            .define(
                HTTP_HOST,
                STRING,
                null,
                MEDIUM,
                "The address the HTTP port binds; by default the first listener's host.")
            .define(
                HTTP_STATUS_REMOTE_ENABLE,
                BOOLEAN,
                false,
                MEDIUM,
                "Whether /status and /lag answer clients beyond loopback; they name topics,"
                    + " groups and replica state, so by default only local ones.")
            .define(
                METRICS_PARTITION_ENABLE,
                BOOLEAN,
                true,
                LOW,
                "Whether /metrics has series per partition; off, only per-topic sums remain.");
    TopicConfigs.CONFIG_DEF
        .configKeys()
        .forEach(
            (topicKey, key) -> {
              String brokerKey = brokerSynonymOf(topicKey);
              if (brokerKey != null) {
                def.define(
                    brokerKey,
                    key.type,
                    key.defaultValue,
                    key.validator,
                    key.importance,
                    key.documentation);
              }
            });
    def.define(
        "log.retention.hours",
        INT,
        null,
        LOW,
        "retention.ms in hours, when log.retention.ms is unset.");
    SecurityConfigs.addTo(def);
    return def;
  }

  /** The broker key that sets the default of topic config {@code topicKey}, or null. */
  public static String brokerSynonymOf(String topicKey) {
    return TOPIC_DEFAULTS.entrySet().stream()
        .filter(e -> e.getValue().equals(topicKey))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElse(null);
  }

  /**
   * Reads {@code file} (Java properties) and applies {@code TIDELOG_*} variables from {@code env}
   * on top.
   *
   * @throws ConfigException naming the key when a key is unknown or a value invalid
   */
  public static BrokerConfig load(Path file, Map<String, String> env) throws IOException {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    }
    Map<String, String> raw = new HashMap<>();
    properties
        .stringPropertyNames()
        .forEach(key -> raw.put(key, properties.getProperty(key).trim()));
    env.forEach(
        (name, value) -> {
          if (name.startsWith(ENV_PREFIX) && name.length() > ENV_PREFIX.length()) {
            raw.put(name.substring(ENV_PREFIX.length()).toLowerCase().replace('_', '.'), value);
          }
        });
    return parse(raw);
  }

  /**
   * @throws ConfigException naming the key when a key is unknown or a value invalid
   */
  public static BrokerConfig parse(Map<String, String> raw) {
    for (String key : raw.keySet()) {
      if (!isKnown(key)) {
        throw new ConfigException("Unknown broker config '" + key + "'");
      }
    }
    Map<String, Object> values = CONFIG_DEF.parse(raw);
    Map<String, String> topicDefaults = new HashMap<>();
    TOPIC_DEFAULTS.forEach(
        (brokerKey, topicKey) -> {
          if (raw.containsKey(brokerKey)) {
            topicDefaults.put(topicKey, raw.get(brokerKey));
          }
        });
    if (!raw.containsKey("log.retention.ms") && values.get("log.retention.hours") != null) {
      topicDefaults.put(
          TopicConfig.RETENTION_MS_CONFIG,
          String.valueOf((Integer) values.get("log.retention.hours") * 3_600_000L));
    }
    TopicConfigs.validate(topicDefaults, Map.of());
    BrokerConfig config = new BrokerConfig(values, Map.copyOf(topicDefaults), Map.copyOf(raw));
    config.queuedMaxRequestBytes(); // refuses a budget the largest request cannot fit in
    config.listeners().bound().forEach(config::security); // refuses what does not add up
    config.checkHttpPortApart();
    config.authorizerConfigs();
    config.etcd();
    return config;
  }

  /**
   * This config with {@code dynamic} set on top of the file and environment, as the broker runs
   * with its dynamic configs; keys it does not know are left out.
   *
   * @throws ConfigException naming the key when a value is invalid
   */
  public BrokerConfig withDynamic(Map<String, String> dynamic) {
    Map<String, String> merged = new HashMap<>(raw);
    dynamic.forEach(
        (key, value) -> {
          if (isKnown(key)) {
            merged.put(key, value);
          }
        });
    return parse(merged);
  }

  /**
   * The configs with {@code listener}'s prefix that it takes only when it starts: all but its
   * keystore and truststore ({@link SslConfigs#RECONFIGURABLE_CONFIGS}).
   */
  Map<String, String> startOnlySecurityConfigs(Listener listener) {
    String prefix = listener.listenerName().configPrefix();
    Map<String, String> startOnly = new HashMap<>();
    raw.forEach(
        (key, value) -> {
          if (key.startsWith(prefix)
              && !SslConfigs.RECONFIGURABLE_CONFIGS.contains(key.substring(prefix.length()))) {
            startOnly.put(key, value);
          }
        });
    return startOnly;
  }

  /** Whether {@code key} is a broker config Tidelog knows, listener-prefixed or not. */
  public static boolean isKnown(String key) {
    return CONFIG_DEF.names().contains(key) || SecurityConfigs.isListenerKey(key);
  }

  /** {@code configs} with the values of {@linkplain #isSensitive sensitive} keys hidden, to log. */
  public static Map<String, String> withoutSensitive(Map<String, String> configs) {
    Map<String, String> shown = new java.util.TreeMap<>();
    configs.forEach(
        (key, value) -> shown.put(key, isSensitive(key) || !isKnown(key) ? "(hidden)" : value));
    return shown;
  }

  /** Whether the file or the environment sets {@code key}. */
  public boolean isSet(String key) {
    return raw.containsKey(key);
  }

  /**
   * The security configs of {@code listener}, as {@link SecurityConfigs#forListener} resolves them.
   *
   * @throws ConfigException when a SASL listener enables a mechanism Tidelog does not serve
   */
  public Map<String, Object> security(Listener listener) {
    Map<String, Object> security = SecurityConfigs.forListener(listener.listenerName(), raw);
    if (listener.protocol().name().startsWith("SASL_")) {
      @SuppressWarnings("unchecked")
      List<String> mechanisms =
          (List<String>) security.get(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG);
      for (String mechanism : mechanisms) {
        if (!SecurityConfigs.SERVED_MECHANISMS.contains(mechanism)) {
          throw new ConfigException(
              listener.listenerName().configPrefix()
                  + BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG,
              mechanisms,
              mechanism
                  + " is not served; the mechanisms are "
                  + SecurityConfigs.SERVED_MECHANISMS);
        }
      }
    }
    return security;
  }

  /**
   * The authorizer's configs ({@code super.users}, {@code allow.everyone.if.no.acl.found}) when
   * {@code authorizer.class.name} names Kafka's StandardAuthorizer; empty when it is not set.
   *
   * @throws ConfigException when it names another authorizer
   */
  public java.util.Optional<Map<String, Object>> authorizerConfigs() {
    String name = ((String) values.get(AUTHORIZER_CLASS_NAME)).trim();
    if (name.isEmpty()) {
      return java.util.Optional.empty();
    }
    if (!name.equals(STANDARD_AUTHORIZER)) {
      throw new ConfigException(
          AUTHORIZER_CLASS_NAME, name, "the authorizer served is " + STANDARD_AUTHORIZER);
    }
    Map<String, Object> configs = new HashMap<>();
    if (values.get(SUPER_USERS) != null) {
      configs.put(SUPER_USERS, values.get(SUPER_USERS));
    }
    configs.put(
        ALLOW_EVERYONE_IF_NO_ACL_FOUND, values.get(ALLOW_EVERYONE_IF_NO_ACL_FOUND).toString());
    return java.util.Optional.of(configs);
  }

  public int nodeId() {
    return (Integer) values.get(NODE_ID);
  }

  public Listeners listeners() {
    return Listeners.parse(
        list(LISTENERS),
        list(ADVERTISED_LISTENERS),
        list(LISTENER_SECURITY_PROTOCOL_MAP),
        (String) values.get(INTER_BROKER_LISTENER_NAME),
        (String) values.get(SECURITY_INTER_BROKER_PROTOCOL));
  }

  public List<Path> logDirs() {
    return list(LOG_DIRS).stream().map(Path::of).toList();
  }

  public int numPartitions() {
    return (Integer) values.get(NUM_PARTITIONS);
  }

  public int defaultReplicationFactor() {
    return (Integer) values.get(DEFAULT_REPLICATION_FACTOR);
  }

  public boolean autoCreateTopicsEnable() {
    return (Boolean) values.get(AUTO_CREATE_TOPICS_ENABLE);
  }

  public double autoCreatePartitionRate() {
    return (Double) values.get(AUTO_CREATE_PARTITION_RATE);
  }

  public int socketRequestMaxBytes() {
    return (Integer) values.get(SOCKET_REQUEST_MAX_BYTES);
  }

  public ListenerLimits listenerLimits() {
    return new ListenerLimits(
        socketRequestMaxBytes(),
        queuedMaxRequestBytes(),
        (Integer) values.get(MAX_CONNECTIONS),
        (Integer) values.get(MAX_CONNECTIONS_PER_IP),
        (Long) values.get(CONNECTIONS_MAX_IDLE_MS));
  }

  private long queuedMaxRequestBytes() {
    Long configured = (Long) values.get(QUEUED_MAX_REQUEST_BYTES);
    if (configured == null) {
      return Math.max(Runtime.getRuntime().maxMemory() / 4, socketRequestMaxBytes());
    }
    if (configured != -1 && configured < socketRequestMaxBytes()) {
      throw new ConfigException(
          QUEUED_MAX_REQUEST_BYTES
              + " ("
              + configured
              + ") must be -1 or at least "
              + SOCKET_REQUEST_MAX_BYTES
              + " ("
              + socketRequestMaxBytes()
              + "), or the largest request could never be read");
    }
    return configured;
  }

  public int numRecoveryThreadsPerDataDir() {
    return (Integer) values.get(NUM_RECOVERY_THREADS_PER_DATA_DIR);
  }

  public int numIoThreads() {
    return (Integer) values.get(NUM_IO_THREADS);
  }

  public String clusterId() {
    return (String) values.get(CLUSTER_ID);
  }

  public String rack() {
    return (String) values.get(BROKER_RACK);
  }

  /** How to reach etcd: its URLs, TLS files and user. */
  public EtcdSettings etcd() {
    if ((values.get(ETCD_TLS_CERT_FILE) == null) != (values.get(ETCD_TLS_KEY_FILE) == null)) {
      throw new ConfigException(
          ETCD_TLS_CERT_FILE + " and " + ETCD_TLS_KEY_FILE + " are set together, or neither");
    }
    Password password = (Password) values.get(ETCD_PASSWORD);
    return new EtcdSettings(
        list(ETCD_ENDPOINTS),
        (String) values.get(ETCD_TLS_CA_FILE),
        (String) values.get(ETCD_TLS_CERT_FILE),
        (String) values.get(ETCD_TLS_KEY_FILE),
        !((String) values.get(ETCD_TLS_ENDPOINT_IDENTIFICATION_ALGORITHM)).isEmpty(),
        (String) values.get(ETCD_USER),
        password == null ? null : password.value());
  }

  public int brokerSessionTimeoutMs() {
    return (Integer) values.get(BROKER_SESSION_TIMEOUT_MS);
  }

  public int requestTimeoutMs() {
    return (Integer) values.get(REQUEST_TIMEOUT_MS);
  }

  public long replicaLagTimeMaxMs() {
    return (Long) values.get(REPLICA_LAG_TIME_MAX_MS);
  }

  public int replicaFetchWaitMaxMs() {
    return (Integer) values.get(REPLICA_FETCH_WAIT_MAX_MS);
  }

  public int fetchMaxBytes() {
    return (Integer) values.get(FETCH_MAX_BYTES);
  }

  public int maxIncrementalFetchSessionCacheSlots() {
    return (Integer) values.get(MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS);
  }

  public int replicaFetchMaxBytes() {
    return (Integer) values.get(REPLICA_FETCH_MAX_BYTES);
  }

  public int replicaFetchResponseMaxBytes() {
    return (Integer) values.get(REPLICA_FETCH_RESPONSE_MAX_BYTES);
  }

  public long leaderReplicationThrottledRate() {
    return (Long) values.get(LEADER_REPLICATION_THROTTLED_RATE);
  }

  public long followerReplicationThrottledRate() {
    return (Long) values.get(FOLLOWER_REPLICATION_THROTTLED_RATE);
  }

  public long replicaAlterLogDirsIoMaxBytesPerSecond() {
    return (Long) values.get(REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND);
  }

  public boolean autoLeaderRebalanceEnable() {
    return (Boolean) values.get(AUTO_LEADER_REBALANCE_ENABLE);
  }

  public long leaderImbalanceCheckIntervalMs() {
    return (Long) values.get(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS) * 1000;
  }

  public boolean logCleanerEnable() {
    return (Boolean) values.get(LOG_CLEANER_ENABLE);
  }

  public long logCleanerDedupeBufferSize() {
    return (Long) values.get(LOG_CLEANER_DEDUPE_BUFFER_SIZE);
  }

  public double logCleanerIoMaxBytesPerSecond() {
    return (Double) values.get(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND);
  }

  public long logCleanerBackoffMs() {
    return (Long) values.get(LOG_CLEANER_BACKOFF_MS);
  }

  /** The group coordinator's settings. */
  public GroupConfig groupConfig() {
    return new GroupConfig(
        (Integer) values.get(GROUP_INITIAL_REBALANCE_DELAY_MS),
        (Integer) values.get(GROUP_MIN_SESSION_TIMEOUT_MS),
        (Integer) values.get(GROUP_MAX_SESSION_TIMEOUT_MS),
        (Integer) values.get(GROUP_MAX_SIZE),
        (Integer) values.get(OFFSETS_TOPIC_NUM_PARTITIONS),
        (Integer) values.get(OFFSETS_TOPIC_REPLICATION_FACTOR),
        (Integer) values.get(OFFSETS_TOPIC_SEGMENT_BYTES),
        (Integer) values.get(OFFSETS_RETENTION_MINUTES) * 60_000L,
        (Long) values.get(OFFSETS_RETENTION_CHECK_INTERVAL_MS),
        (Integer) values.get(OFFSETS_COMMIT_TIMEOUT_MS),
        (Integer) values.get(OFFSET_METADATA_MAX_BYTES));
  }

  /** The transaction coordinator's settings. */
  public TransactionConfig transactionConfig() {
    return new TransactionConfig(
        (Integer) values.get(TRANSACTION_STATE_LOG_NUM_PARTITIONS),
        (Short) values.get(TRANSACTION_STATE_LOG_REPLICATION_FACTOR),
        (Integer) values.get(TRANSACTION_STATE_LOG_MIN_ISR),
        (Integer) values.get(TRANSACTION_STATE_LOG_SEGMENT_BYTES),
        (Integer) values.get(TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE),
        (Integer) values.get(TRANSACTION_MAX_TIMEOUT_MS),
        (Integer) values.get(TRANSACTIONAL_ID_EXPIRATION_MS),
        (Integer) values.get(TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS),
        (Integer) values.get(TRANSACTION_REMOVE_EXPIRED_TRANSACTION_CLEANUP_INTERVAL_MS),
        requestTimeoutMs(),
        (Integer) values.get(ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS),
        (Integer) values.get(ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS));
  }

  /**
   * Refuses an HTTP port that a listener binds too: Vert.x would share the port between the two
   * servers and hand each new connection to either of them.
   */
  private void checkHttpPortApart() {
    int http = httpPort();
    for (Listener listener : listeners().bound()) {
      if (http != 0 && listener.port() == http) {
        throw new ConfigException(
            HTTP_PORT, http, "listener " + listener.name() + " binds this port already");
      }
    }
  }

  public int httpPort() {
    return (Integer) values.get(HTTP_PORT);
  }

  public String httpHost() {
    String host = (String) values.get(HTTP_HOST);
    return host != null ? host : listeners().bound().get(0).host();
  }

  public boolean httpStatusRemoteEnable() {
    return (Boolean) values.get(HTTP_STATUS_REMOTE_ENABLE);
  }

  public boolean metricsPartitionEnable() {
    return (Boolean) values.get(METRICS_PARTITION_ENABLE);
  }

  /**
   * The topic configs that broker keys set ({@code log.*}, {@code min.insync.replicas}, {@code
   * unclean.leader.election.enable}), under topic-level names.
   */
  public Map<String, String> topicDefaults() {
    return topicDefaults;
  }

  /**
   * Every broker config and its value, as DescribeConfigs shows them, with the listener-prefixed
   * security configs that are set; a sensitive one's value is null. Kafka's dynamic-only keys
   * ({@link #LISTED_WHEN_SET}) are shown only when set.
   */
  public Map<String, String> describe() {
    Map<String, String> described = new java.util.TreeMap<>();
    CONFIG_DEF
        .configKeys()
        .forEach(
            (key, def) -> {
              if (LISTED_WHEN_SET.contains(key) && !isSet(key)) {
                return;
              }
              Object value = values.get(key);
              described.put(
                  key,
                  value == null || isSensitive(key)
                      ? null
                      : ConfigDef.convertToString(value, def.type));
            });
    raw.forEach(
        (key, value) -> {
          if (SecurityConfigs.isListenerKey(key)) {
            described.put(key, isSensitive(key) ? null : value);
          }
        });
    return described;
  }

  /** The type of a config that {@link #describe()} lists. */
  public static ConfigDef.Type typeOf(String key) {
    ConfigDef.ConfigKey def = CONFIG_DEF.configKeys().get(key);
    if (def == null) {
      def = SecurityConfigs.CONFIG_DEF.configKeys().get(SecurityConfigs.unprefixed(key));
    }
    return def == null ? ConfigDef.Type.PASSWORD : def.type; // a mechanism's JAAS config
  }

  /**
   * Whether DescribeConfigs withholds the value, as Kafka does for passwords and keys: every
   * PASSWORD config, listener-prefixed or not, and Tidelog's etcd settings, which say where the
   * metadata is and how to reach it.
   */
  public static boolean isSensitive(String key) {
    return typeOf(key) == ConfigDef.Type.PASSWORD || key.startsWith(ETCD_PREFIX);
  }

  /** The documentation of a config that {@link #describe()} lists. */
  public static String documentationOf(String key) {
    ConfigDef.ConfigKey def = CONFIG_DEF.configKeys().get(key);
    if (def == null) {
      def = SecurityConfigs.CONFIG_DEF.configKeys().get(SecurityConfigs.unprefixed(key));
    }
    return def == null ? "A SASL mechanism's JAAS config on one listener" : def.documentation;
  }

  @SuppressWarnings("unchecked")
  private List<String> list(String key) {
    return (List<String>) values.get(key);
  }
}
