package io.tidelog.operator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidelog.operator.cluster.ClusterReconciler;
import io.tidelog.operator.metrics.OperatorMeterFilter;
import io.tidelog.operator.metrics.ResourceMetrics;
import io.tidelog.operator.topic.TopicAdmins;
import io.tidelog.operator.topic.TopicReconciler;
import io.tidelog.operator.user.UserReconciler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Set;

/** The operator process: reconcilers, leader election, and an HTTP port for probes and metrics. */
public final class TidelogOperator implements AutoCloseable {
  private final Operator operator;
  private final TopicAdmins topicAdmins = new TopicAdmins();
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics jvmGcMetrics = new JvmGcMetrics();
  private final HttpServer http;

  private TidelogOperator(KubernetesClient client, OperatorSettings settings) throws IOException {
    registry.config().meterFilter(new OperatorMeterFilter());
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    jvmGcMetrics.bindTo(registry);
    operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withCloseClientOnStop(false)
                  .withUseSSAToPatchPrimaryResource(false)
                  .withSSABasedCreateUpdateMatchForDependentResources(false)
                  .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry));
              if (settings.leaseNamespace() != null) {
                o.withLeaderElectionConfiguration(
                    LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(
                            "tidelog-operator")
                        .withLeaseNamespace(settings.leaseNamespace())
                        .withIdentity(settings.identity())
                        .withExitOnStopLeading(settings.exitWhenLeadershipLost())
                        .build());
              }
            });
    ResourceMetrics resources =
        new ResourceMetrics(registry, settings.stuckAfter(), Clock.systemUTC());
    if (settings.controllers().contains(OperatorSettings.Controller.CLUSTER)) {
      operator.register(
          new ClusterReconciler(
              settings.brokerAccess(),
              resources,
              settings.secretPropagation(),
              settings.leaseNamespace()),
          o -> watch(o, settings.watchNamespaces()));
    }
    if (settings.controllers().contains(OperatorSettings.Controller.TOPIC)) {
      operator.register(
          new TopicReconciler(
              topicAdmins,
              settings.brokerAccess(),
              settings.topicReleaseAfter(),
              Clock.systemUTC(),
              resources),
          o -> watch(o, settings.watchNamespaces()));
    }
    if (settings.controllers().contains(OperatorSettings.Controller.USER)) {
      operator.register(
          new UserReconciler(
              settings.brokerAccess(), settings.topicReleaseAfter(), Clock.systemUTC(), resources),
          o -> watch(o, settings.watchNamespaces()));
    }
    http = HttpServer.create(new InetSocketAddress(settings.httpPort()), 16);
    http.createContext("/healthz", exchange -> respond(exchange, 200, "ok\n"));
    http.createContext(
        "/readyz",
        exchange -> {
          boolean ready =
              operator.getRuntimeInfo().isStarted()
                  && operator.getRuntimeInfo().allEventSourcesAreHealthy();
          respond(exchange, ready ? 200 : 503, ready ? "ready\n" : "not ready\n");
        });
    http.createContext("/metrics", exchange -> respond(exchange, 200, registry.scrape()));
  }

  /**
   * Serves {@code namespaces} only, when given: the reconciler's informers (its own resources' and
   * the secondary ones) list and watch in each of them rather than in all namespaces.
   */
  private static void watch(ControllerConfigurationOverrider<?> overrider, Set<String> namespaces) {
    if (!namespaces.isEmpty()) {
      overrider.settingNamespaces(namespaces);
    }
  }

  /** Starts the operator against {@code client}'s API server. */
  public static TidelogOperator start(KubernetesClient client, OperatorSettings settings)
      throws IOException {
    TidelogOperator started = new TidelogOperator(client, settings);
    started.http.start();
    started.operator.start();
    return started;
  }

  /** The HTTP port of /healthz, /readyz and /metrics. */
  public int httpPort() {
    return http.getAddress().getPort();
  }

  private static void respond(HttpExchange exchange, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    operator.stop();
    http.stop(0);
    topicAdmins.close();
    jvmGcMetrics.close();
    registry.close();
  }

  public static void main(String[] args) throws IOException {
    KubernetesClient client = new KubernetesClientBuilder().build();
    TidelogOperator operator = start(client, OperatorSettings.fromEnvironment());
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  operator.close();
                  client.close();
                },
                "tidelog-operator-shutdown"));
  }
}
