package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.cluster.ClusterModel;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's dashboards and alerts against what a running broker (from {@code bin/tidelog dev})
 * and a running operator (against the mock API) export: every metric they name is in a real scrape,
 * so a rename fails the build instead of a dashboard; {@code promtool check metrics} passes on both
 * scrapes; and docs/metrics.md lists exactly the metrics the scrapes have.
 */
class MonitoringIT {
  private static final String NS = "kafka";
  private static final String OPERATOR_NS = "tidelog-system";
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Series Prometheus makes itself for every target. */
  private static final Set<String> SYNTHETIC = Set.of("up");

  @TempDir static Path dir;
  static DevCluster cluster;
  static MockKubernetes kubernetes;
  static String brokerScrape;
  static String operatorScrape;

  @BeforeAll
  static void start() throws Exception {
    cluster = new DevCluster(dir.resolve("cluster"));
    String bootstrap = cluster.up();
    produceAndCommit(bootstrap);
    // The Cluster reconciles; its Topic's reconciliations fail, as the Cluster's bootstrap Service
    // does not resolve outside Kubernetes: the scrape then has the failure counters too.
    kubernetes =
        new MockKubernetes(
            Set.of(Controller.CLUSTER, Controller.TOPIC),
            Duration.ofSeconds(5),
            ClusterModel::bootstrapServers);
    kubernetes
        .client
        .resource(
            Resources.cluster(
                NS,
                "dev",
                "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://127.0.0.1:2379']}"))
        .create();
    kubernetes.client.resource(Resources.topic(NS, "orders", "partitions: 1", NS, "dev")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> get(kubernetes.operator.httpPort()).contains("reconciliations_failed_total{"));
    operatorScrape = get(kubernetes.operator.httpPort());
    brokerScrape = get(cluster.port + 1000);
  }

  /** Traffic that makes every broker family appear, consumer lag included. */
  private static void produceAndCommit(String bootstrap) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("traffic", 2, (short) 1))).all().get();
    }
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new StringSerializer(),
            new StringSerializer())) {
      for (int i = 0; i < 20; i++) {
        producer.send(new ProducerRecord<>("traffic", i % 2, null, "record-" + i)).get();
      }
    }
    TopicPartition tp = new TopicPartition("traffic", 0);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG,
                "monitoring",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(tp));
      int read = 0;
      for (int poll = 0; poll < 50 && read == 0; poll++) {
        read += consumer.poll(Duration.ofMillis(200)).count();
      }
      assertThat(read).isPositive();
      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(4)));
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (kubernetes != null) {
      kubernetes.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void promtoolAcceptsBothScrapes() throws Exception {
    for (String scrape : List.of(brokerScrape, operatorScrape)) {
      Promtool.Result result = Promtool.runWithInput(scrape, "check", "metrics");
      assertThat(result.exitCode()).as(result.output()).isZero();
    }
  }

  @Test
  void everyMetricTheDashboardsAndAlertsNameIsScraped() throws Exception {
    Set<String> scraped = sampleNames(brokerScrape);
    scraped.addAll(sampleNames(operatorScrape));
    Map<String, Set<String>> named = namedMetrics();
    assertThat(named.keySet())
        .as("the extraction finds the families the issue asks for")
        .contains(
            "tidelog_consumer_group_topic_lag",
            "tidelog_under_replicated_partitions",
            "tidelog_operator_stuck_resources",
            "operator_sdk_reconciliations_failed_total");
    Map<String, Set<String>> missing = new TreeMap<>(named);
    missing.keySet().removeAll(scraped);
    missing.keySet().removeAll(SYNTHETIC);
    assertThat(missing).as("metric -> where it is used, missing from the scrapes").isEmpty();
  }

  @Test
  void everyDashboardQueryFindsSeriesOnAPrometheusScrapingThem(@TempDir Path prometheusDir)
      throws Exception {
    try (PrometheusServer prometheus =
        PrometheusServer.start(
            prometheusDir,
            new PrometheusServer.Target(
                "brokers",
                cluster.port + 1000,
                Map.of("namespace", NS, "tidelog_cluster", "dev", "pod", "dev-broker-0")),
            new PrometheusServer.Target(
                "operator",
                kubernetes.operator.httpPort(),
                Map.of("namespace", OPERATOR_NS, "pod", "tidelog-operator-0")))) {
      // enough samples of both targets for rate() over the dashboards' windows
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> value(prometheus.query("min(count_over_time(up[1m]))")) >= 8);
      List<HasMetadata> chart = HelmChart.render(Map.of("metrics.prometheusRule.enabled", true));
      Map<String, String> failures = new TreeMap<>();
      for (ConfigMap map : HelmChart.all(chart, ConfigMap.class)) {
        JsonNode dashboard = JSON.readTree(map.getData().values().iterator().next());
        String namespace =
            "tidelog-operator".equals(dashboard.path("uid").asText()) ? OPERATOR_NS : NS;
        for (String query : queries(dashboard)) {
          String promql = asPromQl(query, namespace);
          JsonNode answer = prometheus.query(promql);
          if (!"success".equals(answer.path("status").asText())) {
            failures.put(promql, answer.path("error").asText());
          } else if (answer.path("data").path("result").isEmpty()) {
            failures.put(promql, "no series");
          }
        }
      }
      // Alerts are quiet on a healthy cluster: each expression must evaluate, not return series
      for (String expr : PrometheusRules.expressions(chart)) {
        JsonNode answer = prometheus.query(expr);
        if (!"success".equals(answer.path("status").asText())) {
          failures.put(expr, answer.path("error").asText());
        }
      }
      assertThat(failures).as("query -> what went wrong").isEmpty();
    }
  }

  /**
   * A dashboard query as Grafana would send it for this fixture: variables filled in, and a {@code
   * label_values(metric, label)} variable query as the PromQL that lists the label's values.
   */
  private static String asPromQl(String query, String namespace) {
    String promql =
        query
            .replace("$__rate_interval", "15s")
            .replace("$namespace", namespace)
            .replace("$cluster", "dev")
            .replace("$topic", ".*")
            .replace("$group", ".*");
    Matcher labelValues = Pattern.compile("^label_values\\((.+),\\s*(\\w+)\\)$").matcher(promql);
    return labelValues.matches()
        ? "count by (" + labelValues.group(2) + ") (" + labelValues.group(1) + ")"
        : promql;
  }

  private static double value(JsonNode answer) {
    JsonNode result = answer.path("data").path("result");
    return result.isEmpty() ? 0 : result.get(0).path("value").get(1).asDouble();
  }

  /** Every metric a dashboard query, a variable or an alert reads, with where. */
  private static Map<String, Set<String>> namedMetrics() throws Exception {
    List<HasMetadata> chart =
        HelmChart.render(
            Map.of("metrics.prometheusRule.enabled", true, "metrics.podMonitor.enabled", true));
    Map<String, Set<String>> named = new TreeMap<>();
    for (String expr : PrometheusRules.expressions(chart)) {
      PromQl.metricNames(expr)
          .forEach(m -> named.computeIfAbsent(m, k -> new TreeSet<>()).add("alert rules"));
    }
    for (ConfigMap map : HelmChart.all(chart, ConfigMap.class)) {
      for (Map.Entry<String, String> file : map.getData().entrySet()) {
        for (String query : queries(JSON.readTree(file.getValue()))) {
          PromQl.metricNames(query)
              .forEach(m -> named.computeIfAbsent(m, k -> new TreeSet<>()).add(file.getKey()));
        }
      }
    }
    return named;
  }

  /** The PromQL of a dashboard's panels and the queries of its variables. */
  static List<String> queries(JsonNode dashboard) {
    List<String> queries = new ArrayList<>();
    dashboard
        .path("panels")
        .forEach(p -> p.path("targets").forEach(t -> queries.add(t.path("expr").asText())));
    dashboard
        .path("templating")
        .path("list")
        .forEach(
            v -> {
              if ("query".equals(v.path("type").asText())) {
                queries.add(v.path("query").path("query").asText());
              }
            });
    return queries;
  }

  @Test
  void theMetricsReferenceListsExactlyTheScrapedFamilies() throws Exception {
    Set<String> documented = new TreeSet<>();
    Matcher row =
        Pattern.compile("(?m)^\\| `([a-z_:]+)`")
            .matcher(Files.readString(DevCluster.REPO.resolve("docs/metrics.md")));
    while (row.find()) {
      if (row.group(1).startsWith("tidelog_")) {
        documented.add(row.group(1));
      }
    }
    Set<String> ours = families(brokerScrape);
    ours.addAll(families(operatorScrape));
    ours.removeIf(name -> !name.startsWith("tidelog_"));
    assertThat(documented).isEqualTo(ours);
  }

  /** Sample names, as PromQL sees them (histograms as _bucket, _count and _sum). */
  static Set<String> sampleNames(String scrape) {
    Set<String> names = new TreeSet<>();
    scrape
        .lines()
        .filter(l -> !l.isBlank() && !l.startsWith("#"))
        .forEach(l -> names.add(l.split("[{ ]", 2)[0]));
    return names;
  }

  /** Metric families, named as the reference lists them: counters with _total. */
  private static Set<String> families(String scrape) {
    Set<String> names = new TreeSet<>();
    Matcher type = Pattern.compile("(?m)^# TYPE (\\S+) (\\S+)$").matcher(scrape);
    while (type.find()) {
      String name = type.group(1);
      names.add(
          "counter".equals(type.group(2)) && !name.endsWith("_total") ? name + "_total" : name);
    }
    return names;
  }

  private static String get(int port) throws Exception {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }
}
