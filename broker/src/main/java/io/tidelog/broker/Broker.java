package io.tidelog.broker;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.BrokerRegistration;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.Controller;
import io.tidelog.broker.cluster.CrashDetector;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionReassigner;
import io.tidelog.broker.cluster.TopicCreator;
import io.tidelog.broker.cluster.UserScramCredential;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.broker.config.EffectiveTopicConfigs;
import io.tidelog.broker.config.Listener;
import io.tidelog.broker.config.TopicConfigs;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.log.LogCleaner;
import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.metrics.BrokerCollector;
import io.tidelog.broker.metrics.HttpEndpoints;
import io.tidelog.broker.metrics.HttpPort;
import io.tidelog.broker.metrics.MetricsEndpoint;
import io.tidelog.broker.network.AuthenticationMetrics;
import io.tidelog.broker.network.PeerListener;
import io.tidelog.broker.network.SocketServer;
import io.tidelog.broker.protocol.AclsHandler;
import io.tidelog.broker.protocol.BrokerApis;
import io.tidelog.broker.protocol.ClientQuotasHandler;
import io.tidelog.broker.protocol.ConfigsHandler;
import io.tidelog.broker.protocol.DescribeProducersHandler;
import io.tidelog.broker.protocol.ElectLeadersHandler;
import io.tidelog.broker.protocol.FetchHandler;
import io.tidelog.broker.protocol.FindCoordinatorHandler;
import io.tidelog.broker.protocol.GroupHandler;
import io.tidelog.broker.protocol.LogDirsHandler;
import io.tidelog.broker.protocol.MetadataHandler;
import io.tidelog.broker.protocol.OffsetsHandler;
import io.tidelog.broker.protocol.ProduceHandler;
import io.tidelog.broker.protocol.ProducerIdHandler;
import io.tidelog.broker.protocol.ReassignmentsHandler;
import io.tidelog.broker.protocol.RequestDispatcher;
import io.tidelog.broker.protocol.ScramCredentialsHandler;
import io.tidelog.broker.protocol.TopicAdminHandler;
import io.tidelog.broker.protocol.TopicMetrics;
import io.tidelog.broker.protocol.TransactionHandler;
import io.tidelog.broker.protocol.WriteTxnMarkersHandler;
import io.tidelog.broker.quota.ClientQuotaManager;
import io.tidelog.broker.quota.ControllerMutationQuotaManager;
import io.tidelog.broker.quota.ReplicationQuota;
import io.tidelog.broker.replica.LeaderOffsets;
import io.tidelog.broker.replica.ReplicaFetchers;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import io.tidelog.broker.security.InterBrokerSasl;
import io.tidelog.broker.security.ScramCredentialSpec;
import io.tidelog.broker.security.ScramCredentials;
import io.tidelog.broker.security.SslEngineSource;
import io.tidelog.broker.txn.ProducerIds;
import io.tidelog.broker.txn.TransactionCoordinator;
import io.tidelog.broker.txn.TransactionVerifier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Tidelog broker: the cluster metadata from etcd, the log manager, the partitions' storage
 * shards and replica fetchers, the Kafka listener, the health endpoints, its registration and its
 * candidacy for controller. {@code main} runs it in the foreground from a {@code server.properties}
 * file.
 */
public final class Broker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Broker.class);

  /** Kafka's {@code log.retention.check.interval.ms} default. */
  private static final long RETENTION_CHECK_INTERVAL_MS = 300_000;

  /** Kafka's {@code log.flush.offset.checkpoint.interval.ms} default. */
  private static final long CHECKPOINT_INTERVAL_MS = 60_000;

  private static final long START_TIMEOUT_SECONDS = 60;

  private static final long ETCD_RETRY_FIRST_MS = 1_000;
  private static final long ETCD_RETRY_MAX_MS = 30_000;

  /**
   * How long a controlled shutdown waits for the controller to move this broker's leaderships;
   * below {@code bin/tidelog}'s 30 s stop timeout.
   */
  private static final long CONTROLLED_SHUTDOWN_TIMEOUT_MS = 20_000;

  private final Vertx vertx;
  private final MetadataStore metadata;
  private final LogManager logManager;
  private final ReplicaManager replicas;
  private final ExecutorService metadataExecutor;
  private final PrometheusRegistry registry;
  private final BoundListeners listeners;
  private final Authorization authorization;
  private final Quotas quotas;
  private final DynamicBrokerConfig dynamicConfig;
  private final EffectiveTopicConfigs topicConfigs;

  /**
   * The client quotas, the follower replication throttle, and the Kafka metrics their rates and
   * buckets live in.
   */
  private record Quotas(
      Metrics metrics,
      ClientQuotaManager produce,
      ClientQuotaManager fetch,
      ClientQuotaManager requests,
      ControllerMutationQuotaManager mutations,
      ReplicationQuota follower) {}

  private PeerListener peers;
  private ReplicaFetchers fetchers;
  private CrashDetector crashes;
  private GroupCoordinator groups;
  private ProducerIds producerIds;
  private TransactionCoordinator transactions;
  private TransactionVerifier transactionVerifier;
  private LogCleaner cleaner;
  private BrokerConfig cleanerConfig;
  private long cleanerTimer = -1;
  private LeaderOffsets leaderOffsets;
  private Controller controller;
  private BrokerRegistration registration;
  private SocketServer server;
  private HttpPort http;
  private volatile boolean ready;

  private Broker(
      Vertx vertx,
      MetadataStore metadata,
      LogManager logManager,
      ReplicaManager replicas,
      ExecutorService metadataExecutor,
      BoundListeners listeners,
      Authorization authorization,
      PrometheusRegistry registry,
      Quotas quotas,
      DynamicBrokerConfig dynamicConfig,
      EffectiveTopicConfigs topicConfigs) {
    this.quotas = quotas;
    this.dynamicConfig = dynamicConfig;
    this.topicConfigs = topicConfigs;
    this.vertx = vertx;
    this.registry = registry;
    this.listeners = listeners;
    this.authorization = authorization;
    this.metadata = metadata;
    this.logManager = logManager;
    this.replicas = replicas;
    this.metadataExecutor = metadataExecutor;
  }

  public static Broker start(BrokerConfig config) throws Exception {
    return start(config, List.of());
  }

  /**
   * Starts the broker, first storing each of {@code addScram} that etcd does not hold yet (as
   * Kafka's {@code kafka-storage format --add-scram}): a credential once stored, or since changed
   * with AlterUserScramCredentials, is never overwritten.
   */
  public static Broker start(BrokerConfig config, List<ScramCredentialSpec> addScram)
      throws Exception {
    ScramCredentials scram = new ScramCredentials();
    PrometheusRegistry registry = new PrometheusRegistry();
    Metrics quotaMetrics = new Metrics(new MetricConfig(), List.of(), Time.SYSTEM, true);
    Counter[] throttles = ClientQuotaManager.counters(registry);
    ClientQuotaManager produceQuota =
        new ClientQuotaManager(
            "producer_byte_rate",
            ClientQuotaManager.BYTE_RATE_MAX_THROTTLE_MS,
            quotaMetrics,
            Time.SYSTEM,
            throttles[0],
            throttles[1]);
    ClientQuotaManager fetchQuota =
        new ClientQuotaManager(
            "consumer_byte_rate",
            ClientQuotaManager.BYTE_RATE_MAX_THROTTLE_MS,
            quotaMetrics,
            Time.SYSTEM,
            throttles[0],
            throttles[1]);
    ClientQuotaManager requestQuota =
        new ClientQuotaManager(
            "request_percentage",
            ClientQuotaManager.REQUEST_MAX_THROTTLE_MS,
            quotaMetrics,
            Time.SYSTEM,
            throttles[0],
            throttles[1]);
    ControllerMutationQuotaManager mutationQuota =
        new ControllerMutationQuotaManager(quotaMetrics, Time.SYSTEM, throttles[0], throttles[1]);
    Authorization authorization =
        config
            .authorizerConfigs()
            .map(c -> Authorization.standard(c, registry))
            .orElseGet(() -> Authorization.none(registry));
    BoundListeners listeners = new BoundListeners(config, scram);
    Vertx vertx = Vertx.vertx();
    HttpPort http;
    MetadataStore metadata;
    LogManager logManager;
    DynamicBrokerConfig dynamicConfig = new DynamicBrokerConfig(config);
    EffectiveTopicConfigs topicConfigs = new EffectiveTopicConfigs(dynamicConfig::topicDefaults);
    try {
      http = await(HttpPort.listen(vertx, config.httpPort(), config.httpHost()));
      metadata = connectToEtcd(config);
      // First, so that every later listener of an image sees the broker config that goes with it
      metadata.addListener(
          (image, delta) -> {
            if (delta.everything() || delta.brokerConfigs()) {
              dynamicConfig.update(image.brokerConfigs());
            }
          });
      dynamicConfig.update(metadata.image().brokerConfigs());
      metadata.addListener(
          (image, delta) ->
              topicConfigs.retain(
                  delta.everything() ? topicConfigs.topics() : delta.topics(),
                  image.topics().keySet()));
      metadata.addListener(
          (image, delta) -> {
            if (delta.everything() || delta.scramCredentials()) {
              loadScramCredentials(image, scram);
            }
          });
      for (ScramCredentialSpec spec : addScram) {
        boolean added =
            metadata.putScramCredentialIfAbsent(
                new UserScramCredential(spec.user(), spec.mechanism(), spec.credential()));
        LOG.info("{}: {}", spec, added ? "added" : "already there, left as it is");
      }
      loadScramCredentials(metadata.image(), scram);
      metadata.addListener(
          (image, delta) -> {
            if (delta.everything() || !delta.acls().isEmpty()) {
              authorization.load(image.revision(), image.acls());
            }
          });
      authorization.load(metadata.image().revision(), metadata.image().acls());
      metadata.addListener(
          (image, delta) -> {
            if (delta.everything() || delta.quotas()) {
              produceQuota.update(image.quotas());
              fetchQuota.update(image.quotas());
              requestQuota.update(image.quotas());
              mutationQuota.update(image.quotas());
            }
          });
      produceQuota.update(metadata.image().quotas());
      fetchQuota.update(metadata.image().quotas());
      requestQuota.update(metadata.image().quotas());
      mutationQuota.update(metadata.image().quotas());
      logManager =
          LogManager.start(
              config.logDirs(),
              topic -> topicConfig(dynamicConfig, topicConfigs, metadata, topic),
              dynamicConfig.current().numRecoveryThreadsPerDataDir(),
              Time.SYSTEM);
    } catch (Exception e) {
      await(vertx.close());
      throw e;
    }
    ExecutorService metadataExecutor =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "tidelog-metadata"));
    Counter replicationBytes = ReplicationQuota.counter(registry);
    ReplicationQuota leaderQuota =
        new ReplicationQuota(
            quotaMetrics,
            Time.SYSTEM,
            replicationBytes,
            "leader",
            dynamicConfig.current().leaderReplicationThrottledRate());
    ReplicationQuota followerQuota =
        new ReplicationQuota(
            quotaMetrics,
            Time.SYSTEM,
            replicationBytes,
            "follower",
            dynamicConfig.current().followerReplicationThrottledRate());
    ReplicationQuota alterLogDirsQuota =
        new ReplicationQuota(
            quotaMetrics,
            Time.SYSTEM,
            replicationBytes,
            "alter-log-dirs",
            dynamicConfig.current().replicaAlterLogDirsIoMaxBytesPerSecond());
    dynamicConfig.addListener(
        running -> {
          leaderQuota.update(running.leaderReplicationThrottledRate());
          followerQuota.update(running.followerReplicationThrottledRate());
          alterLogDirsQuota.update(running.replicaAlterLogDirsIoMaxBytesPerSecond());
        });
    ReplicaManager replicas =
        new ReplicaManager(
            config.nodeId(),
            logManager,
            metadata,
            topicConfigs,
            dynamicConfig.current().numIoThreads(),
            config.replicaLagTimeMaxMs(),
            metadataExecutor,
            leaderQuota,
            alterLogDirsQuota);
    Broker broker =
        new Broker(
            vertx,
            metadata,
            logManager,
            replicas,
            metadataExecutor,
            listeners,
            authorization,
            registry,
            new Quotas(
                quotaMetrics, produceQuota, fetchQuota, requestQuota, mutationQuota, followerQuota),
            dynamicConfig,
            topicConfigs);
    // As in Kafka, clients are served only once the broker is registered: before that it could not
    // place the replicas of a topic that a client's Metadata request creates
    broker.http = http;
    try {
      broker.join(config);
      broker.listen(config);
    } catch (Exception e) {
      broker.close(); // revokes a registration it made: a broker that cannot serve must not lead
      throw e;
    }
    broker.ready = true;
    return broker;
  }

  /**
   * Connects to etcd, retrying with back-off (1 s doubling to 30 s) for as long as it does not
   * answer, before anything touches the logs.
   */
  private static MetadataStore connectToEtcd(BrokerConfig config) throws InterruptedException {
    long backoffMs = ETCD_RETRY_FIRST_MS;
    while (true) {
      try {
        return MetadataStore.connect(config.etcd(), config.clusterId());
      } catch (TimeoutException e) {
        LOG.warn("{}; retrying in {} s", e.getMessage(), backoffMs / 1000);
        Thread.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, ETCD_RETRY_MAX_MS);
      }
    }
  }

  /** Follows the metadata, registers, and campaigns for controller. */
  private void join(BrokerConfig config) throws InterruptedException {
    peers = peerListener(config.listeners().interBroker(), config);
    crashes = new CrashDetector(metadata, config.nodeId());
    fetchers =
        new ReplicaFetchers(
            vertx,
            peers,
            metadata,
            replicas,
            config.replicaFetchWaitMaxMs(),
            config.replicaFetchMaxBytes(),
            config.replicaFetchResponseMaxBytes(),
            quotas.follower(),
            crashes);
    replicas.start(fetchers);
    groups = new GroupCoordinator(config.groupConfig(), metadata, replicas, Time.SYSTEM);
    groups.start(); // before registering, so that it sees every __consumer_offsets leadership
    producerIds = new ProducerIds(metadata, metadataExecutor);
    transactions =
        new TransactionCoordinator(
            config.transactionConfig(), metadata, replicas, producerIds, vertx, peers, Time.SYSTEM);
    transactions.start(); // likewise for __transaction_state
    controller =
        new Controller(
            metadata,
            config.nodeId(),
            topicConfigs,
            config.autoLeaderRebalanceEnable(),
            config.leaderImbalanceCheckIntervalMs());
    registration =
        new BrokerRegistration(
            metadata,
            new BrokerInfo(
                config.nodeId(),
                config.listeners().advertised().stream()
                    .map(l -> new BrokerInfo.Endpoint(l.name(), l.host(), l.port()))
                    .toList(),
                config.rack(),
                Uuid.randomUuid().toString(),
                false),
            config.brokerSessionTimeoutMs(),
            lease -> {
              controller.campaign(lease);
              replicas.reapplyMetadata();
            },
            replicas::resignAll,
            replicas::reapplyMetadata);
    registration.register();
  }

  private static void loadScramCredentials(ClusterImage image, ScramCredentials scram) {
    Map<ScramMechanism, Map<String, ScramCredential>> byMechanism = new HashMap<>();
    image
        .scramCredentials()
        .values()
        .forEach(
            c ->
                byMechanism
                    .computeIfAbsent(c.mechanism(), m -> new HashMap<>())
                    .put(c.user(), c.credential()));
    scram.replace(image.revision(), byMechanism);
  }

  /**
   * The inter-broker listener as followers connect through it: its name, on SSL and SASL_SSL this
   * broker's client engines, which present its certificate, and on SASL listeners its SASL clients.
   */
  private PeerListener peerListener(Listener interBroker, BrokerConfig config) {
    SslEngineSource tls = listeners.security(interBroker.name()).sslEngines();
    InterBrokerSasl sasl =
        interBroker.protocol().name().startsWith("SASL_")
            ? InterBrokerSasl.create(interBroker.listenerName(), config.security(interBroker))
            : null;
    return new PeerListener(
        interBroker.name(),
        tls == null ? null : tls::clientEngine,
        sasl == null ? null : sasl.mechanism(),
        sasl == null ? null : sasl::newClient);
  }

  /** The log config of {@code topic}, or the broker's defaults for a topic etcd does not name. */
  private static LogConfig topicConfig(
      DynamicBrokerConfig config,
      EffectiveTopicConfigs topicConfigs,
      MetadataStore metadata,
      String topic) {
    return metadata
        .topic(topic)
        .map(t -> topicConfigs.of(t.name(), t.modRevision(), t.configs()).log())
        .orElseGet(() -> TopicConfigs.logConfig(config.topicDefaults(), Map.of()));
  }

  private void listen(BrokerConfig config) throws Exception {
    TopicCreator creator = new TopicCreator(dynamicConfig, metadata, metadataExecutor);
    TopicAdminHandler topics =
        new TopicAdminHandler(
            dynamicConfig, metadata, metadataExecutor, authorization, quotas.mutations(), creator);
    leaderOffsets = new LeaderOffsets(vertx, peers, replicas, metadata::image);
    TopicMetrics topicMetrics = new TopicMetrics(registry);
    metadata.addListener(
        (image, delta) -> {
          if (delta.everything() || !delta.topics().isEmpty()) {
            topicMetrics.retainTopics(image.topics().keySet());
          }
        });
    transactionVerifier =
        new TransactionVerifier(
            transactions, metadata, vertx, peers, config.nodeId(), config.transactionConfig());
    BrokerApis apis =
        new BrokerApis(
            new MetadataHandler(config, metadata, creator, authorization),
            new ProduceHandler(
                replicas, transactionVerifier, topicMetrics, authorization, quotas.produce()),
            new FetchHandler(
                replicas,
                topicMetrics,
                config.fetchMaxBytes(),
                authorization,
                quotas.fetch(),
                config.maxIncrementalFetchSessionCacheSlots(),
                registry),
            new OffsetsHandler(replicas, authorization),
            topics,
            new ConfigsHandler(dynamicConfig, metadata, metadataExecutor, authorization),
            new ProducerIdHandler(producerIds, transactions, authorization),
            new FindCoordinatorHandler(
                config.groupConfig(), config.transactionConfig(), metadata, creator, authorization),
            new GroupHandler(metadata, groups, transactionVerifier, authorization),
            new TransactionHandler(
                transactions, metadata, config.groupConfig(), authorization, Time.SYSTEM),
            new ScramCredentialsHandler(metadata, metadataExecutor, authorization),
            new AclsHandler(metadata, authorization, metadataExecutor),
            new ClientQuotasHandler(metadata, metadataExecutor, authorization),
            new LogDirsHandler(replicas, authorization),
            new DescribeProducersHandler(metadata, replicas, authorization),
            new ElectLeadersHandler(metadata, metadataExecutor, authorization),
            new ReassignmentsHandler(
                metadata,
                new PartitionReassigner(metadata, creator, topicConfigs),
                metadataExecutor,
                authorization),
            new WriteTxnMarkersHandler(replicas, authorization, config.requestTimeoutMs()));
    AuthenticationMetrics authentications = new AuthenticationMetrics(registry);
    server =
        new SocketServer(
            vertx,
            new RequestDispatcher(
                apis,
                listeners::security,
                authentications,
                quotas.requests(),
                List.of(quotas.produce(), quotas.fetch(), quotas.requests()),
                registry,
                replicaId -> crashes.connectionLost(replicaId, peers.name())),
            config.listenerLimits(),
            authentications,
            registry);
    exportMetrics(config);
    MetricsEndpoint metricsEndpoint = new MetricsEndpoint(vertx, registry);
    await(listeners.serve(vertx, server, dynamicConfig));
    http.serve(
        new HttpEndpoints(
            vertx,
            metricsEndpoint,
            replicas,
            metadata,
            groups,
            leaderOffsets,
            config.httpStatusRemoteEnable(),
            () -> ready));
    vertx.setPeriodic(RETENTION_CHECK_INTERVAL_MS, id -> replicas.runLogMaintenance());
    if (config.logCleanerEnable()) {
      startLogCleaner(dynamicConfig.current());
      dynamicConfig.addListener(
          running -> {
            if (running.logCleanerDedupeBufferSize() != cleanerConfig.logCleanerDedupeBufferSize()
                || running.logCleanerIoMaxBytesPerSecond()
                    != cleanerConfig.logCleanerIoMaxBytesPerSecond()
                || running.logCleanerBackoffMs() != cleanerConfig.logCleanerBackoffMs()) {
              vertx.runOnContext(v -> startLogCleaner(running));
            }
          });
    }
    dynamicConfig.addListener(running -> server.reconfigure(running.listenerLimits()));
    vertx.setPeriodic(
        CHECKPOINT_INTERVAL_MS, id -> metadataExecutor.execute(logManager::checkpoint));
    LOG.info(
        "Broker {} serves Kafka on {}, and /metrics, /healthz and /readyz on port {}",
        config.nodeId(),
        listeners.describeAll(),
        config.httpPort());
  }

  /**
   * Starts the log cleaner with {@code config}'s settings in place of the one before, which is
   * closed: a cleaning it was doing fails and the new one does it again at its next pass.
   */
  private void startLogCleaner(BrokerConfig config) {
    if (cleanerTimer != -1) {
      vertx.cancelTimer(cleanerTimer);
      LogCleaner previous = cleaner;
      vertx.executeBlocking(
          () -> {
            previous.close();
            return null;
          },
          false);
    }
    LogCleaner next =
        new LogCleaner(
            config.logCleanerDedupeBufferSize(),
            config.logCleanerIoMaxBytesPerSecond(),
            Time.SYSTEM);
    cleaner = next;
    cleanerConfig = config;
    cleanerTimer =
        vertx.setPeriodic(config.logCleanerBackoffMs(), id -> replicas.runLogCleaning(next));
    LOG.info(
        "Log cleaner: {} bytes of dedupe buffer, {} bytes/s, every {} ms",
        config.logCleanerDedupeBufferSize(),
        config.logCleanerIoMaxBytesPerSecond(),
        config.logCleanerBackoffMs());
  }

  private void exportMetrics(BrokerConfig config) {
    JvmMetrics.builder().register(registry);
    Histogram flushes =
        Histogram.builder()
            .withoutExemplars()
            .name("tidelog_log_flush_duration_seconds")
            .help("Time to fsync a log, or the files of a rolled segment")
            .classicOnly()
            .classicUpperBounds(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
            .register(registry);
    logManager.onFlush(nanos -> flushes.observe(nanos / 1e9));
    registry.register(
        new BrokerCollector(
            replicas,
            metadata,
            controller,
            registration,
            logManager,
            groups,
            transactions,
            leaderOffsets,
            crashes,
            config.metricsPartitionEnable()));
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future
        .toCompletionStage()
        .toCompletableFuture()
        .get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Shuts down in a controlled way, as Kafka does: while still serving, has the controller move
   * this broker's leaderships to other ISR members and take it out of every ISR; then resigns the
   * controller, revokes the registration, stops taking requests, lets the shards finish, and closes
   * the logs cleanly.
   */
  @Override
  public void close() throws Exception {
    ready = false;
    if (registration != null) {
      moveLeadershipsAway();
    }
    if (controller != null) {
      controller.resign();
      controller.close();
    }
    if (registration != null) {
      registration.close();
    }
    if (fetchers != null) {
      fetchers.close();
    }
    if (crashes != null) {
      crashes.close();
    }
    if (server != null) {
      await(server.close());
    }
    if (http != null) {
      await(http.close());
    }
    quotas.metrics().close();
    if (transactionVerifier != null) {
      transactionVerifier.close();
    }
    if (transactions != null) {
      transactions.close();
    }
    if (groups != null) {
      groups.close();
    }
    if (cleaner != null) {
      cleaner.close();
    }
    replicas.close();
    metadataExecutor.shutdown();
    metadataExecutor.awaitTermination(30, TimeUnit.SECONDS);
    logManager.close();
    metadata.close();
    await(vertx.close());
  }

  private void moveLeadershipsAway() {
    int id = replicas.localId();
    try {
      registration.beginShutdown();
      boolean moved =
          metadata.awaitImage(
              image -> !image.leadsPartitionsToHandOver(id), CONTROLLED_SHUTDOWN_TIMEOUT_MS);
      if (moved) {
        LOG.info(
            "Controlled shutdown: broker {} leads no partition that another replica could", id);
      } else {
        LOG.warn(
            "Controlled shutdown: broker {} still leads partitions after {} ms; stopping anyway",
            id,
            CONTROLLED_SHUTDOWN_TIMEOUT_MS);
      }
    } catch (RuntimeException e) {
      LOG.warn("Controlled shutdown failed ({}); stopping anyway", e.getMessage());
    }
  }

  /** Runs a broker in the foreground: {@code Broker --config server.properties}. */
  public static void main(String[] args) throws Exception {
    String usage =
        "usage: tidelog broker --config <server.properties>"
            + " [--add-scram 'SCRAM-SHA-512=[name=USER,password=PASSWORD]']...";
    if (args.length < 2 || args.length % 2 != 0 || !args[0].equals("--config")) {
      System.err.println(usage);
      System.exit(2);
    }
    BrokerConfig config;
    List<ScramCredentialSpec> addScram = new java.util.ArrayList<>();
    try {
      config = BrokerConfig.load(Path.of(args[1]), System.getenv());
      for (int i = 2; i < args.length; i += 2) {
        if (!args[i].equals("--add-scram")) {
          System.err.println(usage);
          System.exit(2);
        }
        addScram.add(ScramCredentialSpec.parse(args[i + 1]));
      }
    } catch (ConfigException e) {
      System.err.println("Invalid configuration in " + args[1] + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    Broker broker;
    try {
      broker = start(config, addScram);
    } catch (Exception e) {
      LOG.error("The broker failed to start", e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    broker.close();
                  } catch (Exception e) {
                    LOG.error("Shutdown failed", e);
                  }
                },
                "tidelog-shutdown"));
    broker.logManager.onAllDirsOffline(Broker::exitAfterStorageFailure);
  }

  /**
   * With every log directory offline the broker can serve nothing, yet it would keep leading its
   * partitions: it exits with status 1, as Kafka's broker does when all its log directories have
   * failed, through the controlled shutdown so that the controller moves its leaderships at once.
   * Started again (by Kubernetes) when the disk has room, it recovers its logs. The exit runs on a
   * thread of its own, not the one that met the error; a halt follows if the shutdown hangs.
   */
  private static void exitAfterStorageFailure() {
    LOG.error("Every log directory is offline; the broker stops (exit status 1)");
    Thread halt =
        new Thread(
            () -> {
              try {
                Thread.sleep(2 * CONTROLLED_SHUTDOWN_TIMEOUT_MS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              Runtime.getRuntime().halt(1);
            },
            "tidelog-storage-failure-halt");
    halt.setDaemon(true);
    halt.start();
    new Thread(() -> System.exit(1), "tidelog-storage-failure-exit").start();
  }
}
