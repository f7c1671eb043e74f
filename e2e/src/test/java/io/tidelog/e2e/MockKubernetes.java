package io.tidelog.e2e;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.tidelog.operator.OperatorSettings;
import io.tidelog.operator.TidelogOperator;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterStatus;
import io.tidelog.operator.brokers.BrokerAccess;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * fabric8's mock Kubernetes API server in CRUD mode (real HTTP, real watches) on loopback, with the
 * CRDs from {@code crds/} loaded, and the operator running against it, the way it runs in
 * production (see {@link TidelogOperator#start}).
 */
public final class MockKubernetes implements AutoCloseable {
  private static final String OPERATOR_AGENT = "tidelog-operator-under-test";
  // Held, so that the level sticks: the mock logs every request at INFO.
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  static {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  final KubernetesMockServer server;
  public final KubernetesClient client;
  final TidelogOperator operator;
  private final List<TidelogOperator> others = new ArrayList<>();
  private final List<KubernetesClient> otherClients = new ArrayList<>();

  /** Every request the mock has served so far, in order, as taken from its queue. */
  private final List<RecordedRequest> served = new ArrayList<>();

  private final MockWebServer http = new MockWebServer();

  /** The operators' own client: its requests are told from the test's by the User-Agent. */
  private final KubernetesClient operatorClient;

  /** The chart's values whose RBAC the operator's requests must pass: its install's. */
  private final Map<String, Object> chartValues;

  /** Only the Topic reconciler, for Clusters whose brokers run on this machine. */
  static MockKubernetes topicOperator(Duration topicReleaseAfter) throws IOException {
    return new MockKubernetes(topicSettings(topicReleaseAfter));
  }

  /** The Topic reconciler reaches a Cluster at the address its status gives, in plaintext. */
  static OperatorSettings topicSettings(Duration topicReleaseAfter) {
    return settings(
        Set.of(OperatorSettings.Controller.TOPIC),
        topicReleaseAfter,
        c -> c.getStatus().bootstrapServers);
  }

  /**
   * @param brokerAddress where the Cluster reconciler finds a Cluster's brokers
   */
  MockKubernetes(
      Set<OperatorSettings.Controller> controllers,
      Duration topicReleaseAfter,
      Function<Cluster, String> brokerAddress)
      throws IOException {
    this(settings(controllers, topicReleaseAfter, brokerAddress));
  }

  /**
   * Settings of a test's operator: no leader election, any HTTP port, every namespace, brokers
   * reached at {@code brokerAddress} in plaintext.
   */
  public static OperatorSettings settings(
      Set<OperatorSettings.Controller> controllers,
      Duration topicReleaseAfter,
      Function<Cluster, String> brokerAddress) {
    return new OperatorSettings(
        controllers,
        null,
        "test",
        false,
        0,
        topicReleaseAfter,
        Duration.ofMinutes(10),
        (cluster, client) -> BrokerAccess.plaintext(brokerAddress.apply(cluster)),
        Set.of(),
        Duration.ofSeconds(3));
  }

  /**
   * With the operator started with {@code settings}, or none when null. Its requests are checked
   * against the chart installed as those settings need: a namespaced install when they watch some
   * namespaces only.
   */
  public MockKubernetes(OperatorSettings settings) throws IOException {
    Map<String, Object> values = new HashMap<>();
    if (settings != null) {
      List<String> watched = settings.watchNamespaces().stream().sorted().toList();
      for (int i = 0; i < watched.size(); i++) {
        values.put("watchNamespaces[" + i + "]", watched.get(i));
      }
    }
    chartValues = Map.copyOf(values);
    // CRUD for everything, plus the expectations below (the mixed dispatcher).
    Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
    server =
        new KubernetesMockServer(
            new Context(), http, expectations, new KubernetesMixedDispatcher(expectations), false);
    // Leader election first asks what it may do, which the mock does not serve.
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(
            200,
            new SelfSubjectRulesReviewBuilder()
                .withNewStatus()
                .addNewResourceRule()
                .withApiGroups("coordination.k8s.io")
                .withResources("leases")
                .withVerbs("*")
                .endResourceRule()
                .withIncomplete(false)
                .endStatus()
                .build())
        .always();
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    try (Stream<Path> crds = Files.list(DevCluster.REPO.resolve("crds"))) {
      for (Path crd : crds.sorted().toList()) {
        try (InputStream in = Files.newInputStream(crd)) {
          client
              .resource(
                  client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class))
              .create();
        }
      }
    }
    operatorClient =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration()).withUserAgent(OPERATOR_AGENT).build())
            .build();
    operator = settings == null ? null : TidelogOperator.start(operatorClient, settings);
  }

  /** Starts another operator against the same API, closed with this. */
  TidelogOperator startOperator(OperatorSettings settings) throws IOException {
    TidelogOperator another = TidelogOperator.start(operatorClient, settings);
    others.add(another);
    return another;
  }

  /**
   * Starts another operator against the same API with a client of its own, whose requests {@link
   * #writesBy} tells from the others' by {@code name}; closed with this.
   */
  TidelogOperator startOperator(OperatorSettings settings, String name) throws IOException {
    KubernetesClient own =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration())
                    .withUserAgent(OPERATOR_AGENT + "/" + name)
                    .build())
            .build();
    otherClients.add(own);
    TidelogOperator another = TidelogOperator.start(own, settings);
    others.add(another);
    return another;
  }

  /**
   * The writes the operator started as {@code name} has made so far, as "METHOD path": every
   * request but a GET and a SelfSubjectRulesReview (which asks, and stores nothing).
   */
  synchronized List<String> writesBy(String name) {
    return recorded().stream()
        .filter(r -> (OPERATOR_AGENT + "/" + name).equals(r.getHeader("User-Agent")))
        .filter(r -> !r.getMethod().equals("GET"))
        .filter(r -> !r.getPath().endsWith("/selfsubjectrulesreviews"))
        .map(r -> r.getMethod() + " " + r.getPath())
        .toList();
  }

  /** The requests served so far: those recorded before, and those the mock's queue holds now. */
  private synchronized List<RecordedRequest> recorded() {
    try {
      for (RecordedRequest r = http.takeRequest(0, TimeUnit.MILLISECONDS);
          r != null;
          r = http.takeRequest(0, TimeUnit.MILLISECONDS)) {
        served.add(r);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return List.copyOf(served);
  }

  /**
   * A Cluster in {@code namespace} whose status points at {@code bootstrap}, as the Cluster
   * reconciler writes it once its brokers are up; here the brokers are local processes.
   */
  Cluster cluster(String namespace, String name, String bootstrap) {
    Cluster cluster =
        Resources.cluster(
            namespace,
            name,
            "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://127.0.0.1:2379']}");
    cluster = client.resource(cluster).create();
    cluster.setStatus(new ClusterStatus());
    cluster.getStatus().bootstrapServers = bootstrap;
    return client.resource(cluster).updateStatus();
  }

  @Override
  public void close() {
    others.forEach(TidelogOperator::close);
    otherClients.forEach(KubernetesClient::close);
    if (operator != null) {
      operator.close();
    }
    operatorClient.close();
    client.close();
    List<ChartRbac.Request> denied = deniedOperatorRequests();
    server.destroy();
    if (!denied.isEmpty()) {
      throw new AssertionError(
          "The chart's RBAC would refuse these requests of the operator: " + denied);
    }
  }

  /**
   * The distinct requests the operators made that the Helm chart's ClusterRole and Role do not
   * allow: every test against this mock checks the chart's RBAC against what the operator did.
   */
  private List<ChartRbac.Request> deniedOperatorRequests() {
    ChartRbac rbac = ChartRbac.ofChart(chartValues);
    Set<ChartRbac.Request> denied = new java.util.LinkedHashSet<>();
    for (RecordedRequest r : recorded()) {
      ChartRbac.Request request = new ChartRbac.Request(r.getMethod(), r.getPath());
      if (r.getHeader("User-Agent") != null
          && r.getHeader("User-Agent").startsWith(OPERATOR_AGENT)
          && !rbac.allows(request)) {
        denied.add(request);
      }
    }
    return List.copyOf(denied);
  }
}
